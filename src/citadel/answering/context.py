"""build_context: choose and label the chunks the generator may see for one request.

Two kinds of retrieved chunk never enter the context, and each one kept out is recorded
(`Context.dropped`, copied to the trace):

* **suspicious**: flagged at ingestion as carrying planted instructions or hidden HTML text
  (`citadel.ingest.injection`);
* **superseded**: its document is named in the `supersedes` field of another document among
  this request's candidates, one at least as authoritative and not older. The guard keeps a
  low-authority page from knocking the current policy out by claiming to replace it.

Supersession claims that form a cycle (A supersedes B and B supersedes A) are ignored: both
documents stay candidates, and each ignored claim is recorded (`Context.notes`, copied to the
trace) instead of a drop. See `citadel.supersedes.cyclic_claims` for why that is the honest
rule. A document superseded within the whole snapshot is never retrieved at all
(`citadel.supersedes.retired_documents`); this rule covers the rest, such as a tenant's own
successor of a public document.
"""

from __future__ import annotations

from collections.abc import Sequence

from citadel.records import Chunk, Context, ContextBlock, ContextDrop, ContextNote, RankedChunk
from citadel.supersedes import cyclic_claims, superseding_documents, supersession_claims
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


def supersession_notes(chunks: Sequence[Chunk]) -> list[ContextNote]:
    """One note per claim ignored because it lies on a supersession cycle."""
    cyclic = cyclic_claims(supersession_claims(chunks))
    return [ContextNote(document_id=new, reason="supersession-cycle",
                        detail=f"claims to supersede {old}, which supersedes it in turn "
                               "(a cycle): the claim is ignored and neither is dropped for it")
            for old, new in sorted(cyclic)]


def build_context(
    ranked: Sequence[RankedChunk],
    max_chunks: int = 4,
    *,
    authority_weight: float = 0.0,
    freshness_weight: float = 0.0,
    max_per_document: int | None = None,
) -> Context:
    """Suspicious and superseded chunks out; the rest best first, duplicates by normalised
    content dropped, at most `max_per_document` chunks of one document while other
    documents can fill the context, at most `max_chunks`, labelled S1..Sn for this request
    only."""
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
    chosen: list[RankedChunk] = []
    seen: set[str] = set()
    per_document: dict[str, int] = {}
    capped: list[RankedChunk] = []
    for r in ordered:
        if len(chosen) >= max_chunks:
            break
        norm = normalize(r.chunk.content)
        doc = r.chunk.document_id
        if norm in seen:
            continue
        if max_per_document and per_document.get(doc, 0) >= max_per_document:
            capped.append(r)
            continue
        seen.add(norm)
        per_document[doc] = per_document.get(doc, 0) + 1
        chosen.append(r)
    # The cap makes room for other documents; when none is left to fill the room (a
    # knowledge base of one long document), the capped chunks take it, best first.
    for r in capped[:max_chunks - len(chosen)]:
        chosen.append(r)
    chosen.sort(key=ordered.index)
    blocks = [ContextBlock(label=f"S{k + 1}", ranked=r) for k, r in enumerate(chosen)]
    return Context(blocks=tuple(blocks), dropped=tuple(dropped),
                   notes=tuple(supersession_notes(chunks)))
