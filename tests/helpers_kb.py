"""Small builders for chunks and contexts used by the conflict and context tests."""

from __future__ import annotations

import datetime as dt
import hashlib

from citadel.answering.context import build_context
from citadel.records import Chunk, Context, RankedChunk


def chunk(chunk_id: str, content: str, *, authority: float = 0.5, date: str | None = None,
          title: str | None = None, section: str = "Section", supersedes: str | None = None,
          suspicious: bool = False) -> Chunk:
    doc = chunk_id.split("#")[0]
    return Chunk(chunk_id=chunk_id, document_id=doc, source=f"{doc}.md",
                 title=title or doc.replace("-", " ").title(), section=section,
                 content=content, start=0, end=len(content), authority=authority,
                 effective_date=dt.date.fromisoformat(date) if date else None,
                 supersedes=supersedes, suspicious=suspicious,
                 suspicious_reason="planted" if suspicious else None,
                 content_sha256=hashlib.sha256(content.encode()).hexdigest())


def ranked(*chunks: Chunk) -> list[RankedChunk]:
    return [RankedChunk(chunk=c, retrieval_score=1.0 - i / 20, dense_score=0.6, rank=i + 1)
            for i, c in enumerate(chunks)]


def context(*chunks: Chunk, **kwargs) -> Context:
    return build_context(ranked(*chunks), kwargs.pop("max_chunks", 8), **kwargs)
