"""build_context: choose and label the chunks the generator may see for one request."""

from __future__ import annotations

from collections.abc import Sequence

from citadel.quotes import normalize
from citadel.records import Context, ContextBlock, RankedChunk


def priority(r: RankedChunk, authority_weight: float) -> float:
    """Relevance (rerank score when a reranker ran, else retrieval score) plus authority."""
    relevance = r.rerank_score if r.rerank_score is not None else r.retrieval_score
    return relevance + authority_weight * r.chunk.authority


def build_context(
    ranked: Sequence[RankedChunk],
    max_chunks: int = 4,
    *,
    authority_weight: float = 0.0,
    max_per_document: int | None = None,
) -> Context:
    """Best first, duplicates by normalised content dropped, at most `max_per_document`
    chunks of one document, at most `max_chunks`, labelled S1..Sn for this request only."""
    ordered = sorted(ranked, key=lambda r: (-priority(r, authority_weight), r.rank))
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
    return Context(blocks=tuple(blocks))
