"""Pure metric functions. Each layer is scored on its own; nothing here blends them.

Formulas are in docs/evaluation.md. Every function takes plain values (ids, texts, records)
and returns a number or a failure reason; nothing reads files, indexes or the clock.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from citadel.records import Chunk, Citation, Document
from citadel.text.quotes import locate_quote, normalize
from citadel.text.sentences import sentence_spans
from citadel.text.terms import content_terms

# --- retrieval --------------------------------------------------------------------------------


def unique_in_order(ids: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for i in ids:
        if i not in seen:
            seen.add(i)
            out.append(i)
    return out


def document_ranking(chunk_ids: Sequence[str], document_of: dict[str, str]) -> list[str]:
    """Chunk ranking -> document ranking: each document at the rank of its best chunk."""
    return unique_in_order(document_of.get(c, c.split("#", 1)[0]) for c in chunk_ids)


def recall_at_k(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """|gold ∩ top-k| / |gold|."""
    gold_set = set(gold)
    if not gold_set:
        raise ValueError("recall needs at least one gold id")
    return len(gold_set & set(ranked[:k])) / len(gold_set)


def ndcg_at_k(ranked: Sequence[str], gold: Iterable[str], k: int = 10) -> float:
    """Binary-relevance nDCG: sum over hits of 1/log2(rank+1), over the ideal ordering."""
    gold_set = set(gold)
    if not gold_set:
        raise ValueError("nDCG needs at least one gold id")
    dcg = sum(1 / math.log2(i + 2) for i, cid in enumerate(ranked[:k]) if cid in gold_set)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(gold_set), k)))
    return dcg / ideal


def reciprocal_rank(ranked: Sequence[str], gold: Iterable[str], k: int = 10) -> float:
    """1 / rank of the first gold id within the top k, else 0."""
    gold_set = set(gold)
    for i, cid in enumerate(ranked[:k]):
        if cid in gold_set:
            return 1 / (i + 1)
    return 0.0


# --- citation integrity (membership) and quote validity --------------------------------------

SOURCE_FIELDS = ("document_id", "source", "title", "section")


def integrity_failure(
    citation: Citation,
    retrieved: Iterable[str],
    context_labels: dict[str, str],
    stored: Chunk | None,
    snapshot_id: str,
) -> str | None:
    """Why a citation breaks membership, or None when it is sound.

    Sound: its label named this chunk in this request's context, the chunk was in this
    request's retrieved set, it exists in the snapshot, and the citation carries that chunk's
    real source metadata, content hash and snapshot id.
    """
    if context_labels.get(citation.label) != citation.chunk_id:
        return (f"label {citation.label} -> {citation.chunk_id} is not in the request's context "
                f"{context_labels}")
    if citation.chunk_id not in set(retrieved):
        return f"{citation.chunk_id} was not retrieved for this request"
    if stored is None:
        return f"{citation.chunk_id} does not exist in the snapshot"
    for name in SOURCE_FIELDS:
        have, want = getattr(citation, name), getattr(stored, name)
        if not have or have != want:
            return f"{name} is {have!r}, the chunk's is {want!r}"
    if citation.content_sha256 != stored.content_sha256:
        return "content hash differs from the stored chunk's"
    if citation.snapshot_id != snapshot_id:
        return f"snapshot {citation.snapshot_id!r} is not the request's {snapshot_id!r}"
    return None


def quote_failure(
    citation: Citation, stored: Chunk | None, document: Document | None = None
) -> str | None:
    """Why a citation's quote is invalid, or None: the quote must be found in the cited chunk,
    and its offsets must point at it in the chunk and (when given) in the source document."""
    if stored is None:
        return f"{citation.chunk_id} does not exist in the snapshot"
    if locate_quote(citation.quote, stored.content) is None:
        return f"quote not found in {citation.chunk_id}"
    if not (stored.start <= citation.start < citation.end <= stored.end):
        return (f"offsets {citation.start}:{citation.end} fall outside the chunk "
                f"{stored.start}:{stored.end}")
    at_offsets = stored.content[citation.start - stored.start : citation.end - stored.start]
    if normalize(at_offsets) != normalize(citation.quote):
        return "offsets do not point at the quote in the chunk"
    if document is not None and normalize(document.text[citation.start : citation.end]) != (
        normalize(citation.quote)
    ):
        return "offsets do not point at the quote in the source document"
    return None


# --- the answer's sentences and their citations ----------------------------------------------

_MARKERS = re.compile(r"\[\s*(S\d+(?:\s*[,;]\s*S\d+)*)\s*\]")
MIN_FACTUAL_TERMS = 3


@dataclass(frozen=True)
class CitedSentence:
    text: str
    labels: tuple[str, ...]


def cited_sentences(answer_text: str) -> list[CitedSentence]:
    """Split an answer into sentences with the `[Sn]` labels that follow each one.

    A marker group cites the sentence (of the text before it) that it ends; other sentences
    in that stretch of text carry no citation.
    """
    out: list[CitedSentence] = []
    cursor = 0

    def add_text(text: str, labels: tuple[str, ...]) -> None:
        spans = sentence_spans(text)
        for i, (s, e) in enumerate(spans):
            out.append(CitedSentence(text[s:e], labels if i == len(spans) - 1 else ()))
        if not spans and labels and out:  # a marker right after another marker
            last = out[-1]
            out[-1] = CitedSentence(last.text, tuple(dict.fromkeys(last.labels + labels)))

    for m in _MARKERS.finditer(answer_text):
        labels = tuple(re.split(r"\s*[,;]\s*", m.group(1)))
        add_text(answer_text[cursor : m.start()], labels)
        cursor = m.end()
    add_text(answer_text[cursor:], ())
    return [s for s in out if s.text.strip(" .;:")]


def is_factual(sentence: str) -> bool:
    """A sentence that states something checkable: at least 3 content terms."""
    return len(content_terms(sentence)) >= MIN_FACTUAL_TERMS


# --- answer correctness -----------------------------------------------------------------------

KeyFact = str | Sequence[str]


def fact_present(answer_text: str, fact: KeyFact) -> bool:
    """A key fact (or any of its alternatives) appears in the answer on token boundaries,
    tolerant to case, whitespace and punctuation ("3-5 days" matches "3–5 days")."""
    alternatives = [fact] if isinstance(fact, str) else list(fact)
    haystack = f" {normalize(answer_text)} "
    return any(f" {normalize(alt)} " in haystack for alt in alternatives if normalize(alt))


def missing_facts(answer_text: str, facts: Sequence[KeyFact]) -> list[KeyFact]:
    return [f for f in facts if not fact_present(answer_text, f)]
