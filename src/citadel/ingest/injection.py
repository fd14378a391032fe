"""Planted instructions: document text that tries to instruct the assistant instead of
informing the reader.

A chunk is flagged at ingestion (`suspicious=True` with a reason) when its text matches one
of the rules below, or when it overlaps text that an HTML page hides from its readers
(`display:none`, `visibility:hidden`, the `hidden` attribute, `aria-hidden="true"`, a zero
font size: see `loaders.extract_html`). Text a reader never sees has no business in an
answer, and hidden text is the classic carrier of instructions aimed at a model.

At query time `context.build_context` keeps flagged chunks out of the context entirely (and
records each in the trace): a flagged chunk never reaches a generator, so it can never be
quoted, cited, followed, or used to pick or authorize any action. We exclude rather than
"quote as content" because the cost of exclusion is small (the honest sentences around a
planted one are lost) and the alternative relies on every generator, including a language
model reading the text, resisting the instruction.

The rules are patterns, so they are bypassable (paraphrase, other languages, text split
across chunks) and can misfire on unusual honest text; docs/poison.md lists the limits.
Bump RULES_VERSION when they change: it is part of the snapshot fingerprint, so a changed
rule set rebuilds snapshots instead of silently mixing old and new flags.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from citadel.ingest.injection_rules import RULES, Rule
from citadel.ingest.visibility import VISIBILITY_VERSION
from citadel.records import Chunk
from citadel.text.folding import fold

# The screen's version covers the rules and what counts as hidden HTML text: both decide the
# flags, so either changing rebuilds snapshots.
RULES_VERSION = f"injection-rules-v4+{VISIBILITY_VERSION}"

@dataclass(frozen=True)
class Finding:
    rule: str
    reason: str
    start: int
    end: int
    excerpt: str


def scan(text: str, rules: Sequence[Rule] = RULES) -> list[Finding]:
    """Every rule match in `text`, in order of position. The rules read the text folded
    (`text.folding`: no zero-width characters, look-alike letters or accents); a finding's
    offsets and excerpt are the source text's."""
    folded = fold(text)
    # `needs` are single-spaced words: so is this copy of the text (a match's `\s+` may be
    # a line break or several spaces), with a space at each end for needs that are whole words.
    lower = f" {' '.join(folded.text.lower().split())} "
    findings = []
    present: dict[tuple[str, ...], bool] = {}  # the rules of one language share their needs
    for rule in rules:
        if rule.needs:
            if rule.needs not in present:
                present[rule.needs] = any(word in lower for word in rule.needs)
            if not present[rule.needs]:
                continue
        for m in rule.pattern.finditer(folded.text):
            start, end = folded.span(m.start(), m.end())
            findings.append(Finding(rule.name, rule.reason, start, end,
                                    _excerpt(text, start, end)))
    return sorted(findings, key=lambda f: (f.start, f.rule))


def hidden_overlap(
    chunk_start: int, chunk_end: int, hidden_spans: Sequence[tuple[int, int]]
) -> tuple[int, int] | None:
    """The first hidden span that overlaps [chunk_start, chunk_end), if any.

    The spans are sorted and disjoint (`loaders.extract_html`): a binary search finds the
    candidate, where a scan of every span for every chunk was quadratic on a page made of
    many hidden blocks."""
    i = bisect_right(hidden_spans, chunk_start, key=lambda span: span[1])
    if i < len(hidden_spans) and hidden_spans[i][0] < chunk_end:
        return hidden_spans[i]
    return None


def screen_chunk(chunk: Chunk, hidden_spans: Sequence[tuple[int, int]] = (),
                 document_flags: Sequence[str] = ()) -> Chunk:
    """The chunk, flagged when it carries planted instructions or hidden HTML text, or when
    its whole document is suspicious (`document_flags`, e.g. a page that tries to set its own
    authority: nothing on such a page can be trusted to be what it claims)."""
    reasons: list[str] = list(document_flags)
    span = hidden_overlap(chunk.start, chunk.end, hidden_spans)
    if span is not None:
        lo, hi = max(span[0], chunk.start) - chunk.start, min(span[1], chunk.end) - chunk.start
        reasons.append(f"hidden HTML text: {_excerpt(chunk.content, lo, hi)!r}")
    seen: set[str] = set()
    for f in scan(chunk.content):
        if f.rule not in seen:
            seen.add(f.rule)
            reasons.append(f"{f.reason}: {f.excerpt!r}")
    if not reasons:
        return chunk
    return chunk.model_copy(update={"suspicious": True, "suspicious_reason": "; ".join(reasons)})


def _excerpt(text: str, start: int, end: int, limit: int = 80) -> str:
    piece = re.sub(r"\s+", " ", text[start:end]).strip()
    return piece if len(piece) <= limit else piece[: limit - 1] + "…"
