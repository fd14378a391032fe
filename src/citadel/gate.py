"""The citation gate: the only code that turns a generator's (label, quote) into a `Citation`.

A citation survives only if its label names a chunk of this request's context, the chunk
carries its source metadata and an intact content hash, and the quote is found in the chunk
text. Everything else is dropped with a reason. Markers in the text are rebuilt from the
surviving citations, so nothing the generator wrote inside brackets (of any script: `【S2】`,
`⟦S3⟧`, `［Sx］`) or as an attribution (`(Source: legal-handbook.pdf §9.1)`) reaches the
user: `text.neutralize.strip_markers` removes it first.
"""

from __future__ import annotations

import hashlib

from citadel.records import (
    AnswerSpan,
    Citation,
    Context,
    Draft,
    DraftCitation,
    DraftSpan,
    DroppedCitation,
    Record,
)
from citadel.text.neutralize import strip_markers
from citadel.text.quotes import locate_quote, locate_span, normalize, widen_amount

__all__ = ["GateResult", "GatedSentence", "gate", "strip_markers", "verify", "verify_span"]


class GatedSentence(Record):
    text: str
    labels: tuple[str, ...]


class GateResult(Record):
    sentences: tuple[GatedSentence, ...] = ()
    citations: tuple[Citation, ...] = ()
    dropped: tuple[DroppedCitation, ...] = ()
    span: AnswerSpan | None = None

    def render(self) -> str:
        """Answer text with one `[Sn]` marker per surviving citation label."""
        return " ".join(
            s.text + "".join(f" [{label}]" for label in s.labels) for s in self.sentences
        )


def verify(
    draft_citation: DraftCitation, context: Context, snapshot_id: str
) -> Citation | DroppedCitation:
    """Resolve one (label, quote) against this request's context."""
    label, quote = draft_citation.label.strip(), draft_citation.quote

    def drop(reason: str, detail: str = "") -> DroppedCitation:
        return DroppedCitation(label=label, quote=quote, reason=reason, detail=detail)

    block = context.get(label)
    if block is None:
        return drop("label_not_in_context", f"context labels are {sorted(context.labels)}")
    chunk = block.chunk
    missing = [f for f in ("document_id", "source", "title", "section") if not getattr(chunk, f)]
    if missing:
        return drop("missing_source_metadata", f"chunk {chunk.chunk_id} lacks {missing}")
    if hashlib.sha256(chunk.content.encode()).hexdigest() != chunk.content_sha256:
        return drop("content_hash_mismatch", f"chunk {chunk.chunk_id} content changed")
    if not normalize(quote):
        return drop("empty_quote")
    span = locate_quote(quote, chunk.content)
    if span is None:
        return drop("quote_not_found", f"not in {chunk.chunk_id}")
    start, end = span
    return Citation(
        label=label,
        chunk_id=chunk.chunk_id,
        document_id=chunk.document_id,
        source=chunk.source,
        title=chunk.title,
        section=chunk.section,
        quote=chunk.content[start:end],
        start=chunk.start + start,
        end=chunk.start + end,
        snapshot_id=snapshot_id,
        content_sha256=chunk.content_sha256,
        # Paged sources (PDF): the pages of the quote itself, not of the whole chunk.
        page_start=chunk.page_at(chunk.start + start),
        page_end=chunk.page_at(chunk.start + end - 1),
    )


def gate(draft: Draft, context: Context, snapshot_id: str) -> GateResult:
    """Verify every draft citation; keep sentences that still have at least one."""
    sentences: list[GatedSentence] = []
    citations: list[Citation] = []
    dropped: list[DroppedCitation] = []
    seen: set[tuple[str, int, int]] = set()
    for sentence in draft.sentences:
        text = strip_markers(sentence.text)
        labels: list[str] = []
        for dc in sentence.citations:
            result = verify(dc, context, snapshot_id)
            if isinstance(result, DroppedCitation):
                dropped.append(result)
                continue
            key = (result.chunk_id, result.start, result.end)
            if key not in seen:
                seen.add(key)
                citations.append(result)
            if result.label not in labels:
                labels.append(result.label)
        if not text:
            continue
        if labels:
            sentences.append(GatedSentence(text=text, labels=tuple(labels)))
        else:
            dropped.append(
                DroppedCitation(label=None, quote=text, reason="uncited_sentence",
                                detail="no citation of this sentence survived the gate")
            )
    dropped.extend(
        DroppedCitation(label=dc.label, quote=dc.quote, reason="unattached",
                        detail="no sentence of the answer refers to it")
        for dc in draft.unattached
    )
    return GateResult(sentences=tuple(sentences), citations=tuple(citations),
                      dropped=tuple(dropped), span=verify_span(draft.span, citations))


def verify_span(span: DraftSpan | None, citations: list[Citation]) -> AnswerSpan | None:
    """The answer span, if it lies inside a verified quote of the block it names: offsets
    in the source document come from that citation; otherwise there is no span. A number
    takes in its currency sign, percent sign or unit when the quote has them ("£4.99", not
    "4.99")."""
    if span is None:
        return None
    for c in citations:
        if c.label != span.label:
            continue
        found = locate_span(span.text, c.quote)
        if found is not None:
            start, end = widen_amount(c.quote, *found)
            return AnswerSpan(text=c.quote[start:end], kind=span.kind, label=c.label,
                              chunk_id=c.chunk_id, document_id=c.document_id,
                              start=c.start + start, end=c.start + end)
    return None
