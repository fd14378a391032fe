"""Stand-ins for superseded sections.

`build_context` drops the chunks of a document superseded by another candidate document.
When the outdated chunk was retrieved for its topic (its "Refunds" section, say) and the
current document has a section of the same name that retrieval did not return, that section
is the up-to-date text on the same topic: this stage adds it as a candidate in the outdated
chunk's place, so dropping old text does not also lose the topic.

A stand-in carries the outdated chunk's retrieval score and rank (the slot it fills) and no
dense or lexical score of its own: it was looked up, not retrieved. Only chunks whose
section name matches exactly stand in; no match, no stand-in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from citadel.records import Chunk, RankedChunk
from citadel.supersedes import superseding_documents


def add_successor_sections(
    ranked: Sequence[RankedChunk], chunks_of: Callable[[str], Sequence[Chunk]]
) -> list[RankedChunk]:
    """`ranked` plus, for each chunk of a superseded document, the superseding document's
    chunk(s) of the same section that are not candidates yet. `chunks_of` reads a document's
    chunks from the index (the only I/O here)."""
    superseded_by = superseding_documents([r.chunk for r in ranked])
    if not superseded_by:
        return list(ranked)
    present = {r.chunk_id for r in ranked}
    successors: dict[str, list[Chunk]] = {}
    out = list(ranked)
    for r in ranked:
        successor = superseded_by.get(r.chunk.document_id)
        if successor is None:
            continue
        if successor not in successors:
            successors[successor] = list(chunks_of(successor))
        for chunk in successors[successor]:
            if chunk.section == r.chunk.section and chunk.chunk_id not in present:
                present.add(chunk.chunk_id)
                out.append(RankedChunk(chunk=chunk, retrieval_score=r.retrieval_score,
                                       rerank_score=r.rerank_score, rank=r.rank))
    return out
