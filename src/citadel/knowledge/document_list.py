"""The documents of a snapshot as an operator manages them (`citadel docs list`,
`GET /v1/documents`): one row each, from its manifest (which documents, when each last
changed, which were uploaded) and its index (title, metadata, chunks, flagged chunks).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from citadel.knowledge.snapshots import Manifest
from citadel.retrieval.backends.base import SearchIndex

MAX_PAGE = 500


class DocumentRow(BaseModel):
    document_id: str
    title: str
    source: str
    format: str
    category: str
    authority: float
    tenant: str | None = Field(description="None: public.")
    chunks: int
    flagged: int = Field(description="Chunks flagged at ingest for planted instructions or "
                                     "hidden text: stored, never retrieved.")
    updated_at: str = Field(description="When its text last changed (the build that added "
                                        "or changed it).")
    uploaded: bool = Field(description="Added by `citadel docs add` or POST /v1/documents "
                                       "(else: from a folder given to `citadel ingest`).")


class DocumentPage(BaseModel):
    snapshot_id: str
    total: int = Field(description="Documents matching the filter, on every page.")
    offset: int
    next_offset: int | None = Field(description="The offset of the next page; None: last.")
    documents: list[DocumentRow]


def list_documents(index: SearchIndex, manifest: Manifest, *, tenant: str | None = None,
                   offset: int = 0, limit: int = 50) -> DocumentPage:
    """A page of the snapshot's documents, by id. `tenant`: None lists every document, ""
    the public ones, a name that tenant's only."""
    uploaded = manifest.sources.managed_ids() if manifest.sources is not None else set()
    entries = list(manifest.documents)
    if tenant is not None:  # the filter reads each document; a page without one, its own only
        entries = [e for e in entries if (doc := index.get_document(e.document_id)) is not None
                   and (doc.tenant or "") == tenant]
    page = entries[offset: offset + limit]
    rows = []
    for entry in page:
        doc = index.get_document(entry.document_id)
        if doc is None:  # validated at build: only a damaged snapshot gets here
            continue
        chunks = index.chunks_of(doc.document_id)
        rows.append(DocumentRow(
            document_id=doc.document_id, title=doc.title, source=doc.source, format=doc.format,
            category=doc.category, authority=doc.authority, tenant=doc.tenant,
            chunks=len(chunks), flagged=sum(c.suspicious for c in chunks),
            updated_at=entry.updated_at or manifest.created_at,
            uploaded=doc.document_id in uploaded))
    end = offset + len(page)
    return DocumentPage(snapshot_id=manifest.snapshot_id, total=len(entries), offset=offset,
                        next_offset=end if end < len(entries) else None, documents=rows)
