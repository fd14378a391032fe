"""Small builders: chunks and contexts (the conflict and context tests), knowledge-base
folders (the ingest tests)."""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Mapping
from pathlib import Path

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


# Two tenants' documents and a public one (their tenants: TENANTS, set in citadel-sources.toml).
TENANT_DOCS = {
    "a.md": "# Acme refunds\n\nAcme refunds take 3 days.",
    "b.md": "# Globex refunds\n\nGlobex refunds take 9 days.",
    "c.md": "# Public refunds\n\nPublic refunds take 5 days.",
}
TENANTS = {"a.md": "acme", "b.md": "globex"}


def write_kb(folder: Path, files: Mapping[str, str], tenants: Mapping[str, str] = {}) -> Path:
    """A knowledge-base folder holding `files` (path -> text); `tenants` (path -> tenant)
    goes to its citadel-sources.toml, the only place a document's tenant is set."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, "utf-8")
    if tenants:
        (folder / "citadel-sources.toml").write_text("".join(
            f'[sources."{name}"]\ntenant = "{tenant}"\n\n' for name, tenant in tenants.items()))
    return folder
