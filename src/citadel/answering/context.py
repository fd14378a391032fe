"""build_context: choose and label the chunks the generator may see for one request.

Two kinds of retrieved chunk never enter the context, and each one kept out is recorded
(`Context.dropped`, copied to the trace):

* **suspicious**: flagged at ingestion as carrying planted instructions or hidden HTML text
  (`citadel.ingest.injection`);
* **superseded**: its document is named in the `supersedes` field of another document among
  this request's candidates, one at least as authoritative and not older. The guard keeps a
  low-authority page from knocking the current policy out by claiming to replace it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from citadel.records import Chunk, Context, ContextBlock, ContextDrop, RankedChunk
from citadel.text.quotes import normalize


def priority(r: RankedChunk, authority_weight: float, freshness_weight: float = 0.0,
             freshness: float = 0.0) -> float:
    """Relevance (rerank score when a reranker ran, else retrieval score) plus authority plus
    freshness."""
    relevance = r.rerank_score if r.rerank_score is not None else r.retrieval_score
    return relevance + authority_weight * r.chunk.authority + freshness_weight * freshness


def freshness_scores(chunks: Sequence[Chunk]) -> dict[str, float]:
    """Per document, 0 (oldest effective_date among these chunks) .. 1 (newest); a document
    without a date counts as the oldest. Relative to the candidates, so it never depends on
    today's date."""
    dates = {c.document_id: c.effective_date for c in chunks}
    known = [d for d in dates.values() if d is not None]
    if len(set(known)) < 2:
        return {doc: 0.0 for doc in dates}
    lo, hi = min(known), max(known)
    span = (hi - lo).days
    return {doc: 0.0 if d is None else (d - lo).days / span for doc, d in dates.items()}


def superseding_documents(chunks: Sequence[Chunk]) -> dict[str, str]:
    """{superseded document id: the candidate document that supersedes it}."""
    best: dict[str, tuple[float, dt.date]] = {}
    for c in chunks:
        a, d = best.get(c.document_id, (0.0, dt.date.min))
        best[c.document_id] = (max(a, c.authority), max(d, c.effective_date or dt.date.min))
    out: dict[str, str] = {}
    for c in chunks:
        old = c.supersedes
        if not old or old == c.document_id or old not in best:
            continue
        authority, date = best[c.document_id]
        old_authority, old_date = best[old]
        if authority >= old_authority and date >= old_date:
            out.setdefault(old, c.document_id)
    return out


def build_context(
    ranked: Sequence[RankedChunk],
    max_chunks: int = 4,
    *,
    authority_weight: float = 0.0,
    freshness_weight: float = 0.0,
    max_per_document: int | None = None,
) -> Context:
    """Suspicious and superseded chunks out; the rest best first, duplicates by normalised
    content dropped, at most `max_per_document` chunks of one document, at most
    `max_chunks`, labelled S1..Sn for this request only."""
    chunks = [r.chunk for r in ranked]
    superseded_by = superseding_documents(chunks)
    dropped: list[ContextDrop] = []
    candidates: list[RankedChunk] = []
    for r in ranked:
        c = r.chunk
        if c.suspicious:
            dropped.append(ContextDrop(chunk_id=c.chunk_id, document_id=c.document_id,
                                       reason="suspicious", detail=c.suspicious_reason or ""))
        elif c.document_id in superseded_by:
            dropped.append(ContextDrop(chunk_id=c.chunk_id, document_id=c.document_id,
                                       reason="superseded",
                                       detail=f"superseded by {superseded_by[c.document_id]}"))
        else:
            candidates.append(r)
    fresh = freshness_scores([r.chunk for r in candidates])
    ordered = sorted(
        candidates,
        key=lambda r: (-priority(r, authority_weight, freshness_weight,
                                 fresh[r.chunk.document_id]), r.rank),
    )
    blocks: list[ContextBlock] = []
    seen: set[str] = set()
    per_document: dict[str, int] = {}
    for r in ordered:
        norm = normalize(r.chunk.content)
        doc = r.chunk.document_id
        if norm in seen or (max_per_document and per_document.get(doc, 0) >= max_per_document):
            continue
        seen.add(norm)
        per_document[doc] = per_document.get(doc, 0) + 1
        blocks.append(ContextBlock(label=f"S{len(blocks) + 1}", ranked=r))
        if len(blocks) >= max_chunks:
            break
    return Context(blocks=tuple(blocks), dropped=tuple(dropped))
