"""Re-checking saved citation receipts against the knowledge base (`citadel verify`).

A receipt is a citation as `citadel ask --json` printed it. It holds up only while its
snapshot still exists and is complete, the cited chunk in it still has the receipt's content
hash (and its content still hashes to that), and the quote still sits at the receipt's
offsets in the snapshot's stored document text, inside the chunk, on the pages the receipt
names (a PDF receipt's `page_start`/`page_end`, checked against the document's stored page
boundaries). Receipts are read as
untrusted input, never as `Citation`s: only the citation gate builds those.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from citadel.config import Settings
from citadel.knowledge.snapshots import Catalog
from citadel.retrieval.backends import Backend, SearchIndex, get_backend


class VerifyError(ValueError):
    """The input is not an answer with citations (the message says why)."""


class Receipt(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    label: str = ""
    chunk_id: str
    document_id: str
    quote: str
    start: int
    end: int
    snapshot_id: str
    content_sha256: str
    page_start: int | None = None
    page_end: int | None = None


class Verdict(BaseModel):
    model_config = ConfigDict(frozen=True)

    receipt: Receipt
    ok: bool
    reason: str


def parse_receipts(text: str) -> list[Receipt]:
    """Receipts from an Answer as JSON (or a bare list of citations)."""
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        raise VerifyError(f"not JSON: {exc}") from None
    citations = data.get("citations") if isinstance(data, dict) else data
    if not isinstance(citations, list):
        raise VerifyError("expected the JSON of `citadel ask --json` (an object with "
                          "\"citations\")")
    receipts: list[Receipt] = []
    for i, item in enumerate(citations, start=1):
        try:
            receipts.append(Receipt.model_validate(item))
        except ValidationError as exc:
            fields = ", ".join(".".join(str(p) for p in e["loc"]) for e in exc.errors())
            raise VerifyError(f"citation {i} is malformed ({fields})") from None
    return receipts


def verify_receipts(
    settings: Settings, receipts: Sequence[Receipt], backend: Backend | None = None
) -> list[Verdict]:
    catalog = Catalog(settings.home)
    backend = backend or get_backend(settings)
    indexes: dict[str, SearchIndex | str] = {}  # snapshot id -> open index or why not
    try:
        verdicts = []
        for receipt in receipts:
            sid = receipt.snapshot_id
            if sid not in indexes:
                indexes[sid] = _open(catalog, backend, settings, sid)
            index = indexes[sid]
            reason = index if isinstance(index, str) else _check(index, receipt)
            verdicts.append(Verdict(receipt=receipt, ok=reason is None, reason=reason or "ok"))
        return verdicts
    finally:
        for index in indexes.values():
            if not isinstance(index, str):
                index.close()


def _open(catalog: Catalog, backend: Backend, settings: Settings, sid: str) -> SearchIndex | str:
    info = catalog.get(sid)
    if info is None:
        return f"snapshot {sid} no longer exists"
    if info.state != "complete":
        return f"snapshot {sid} is {info.state}, not complete"
    if not backend.has_snapshot(sid):
        return f"the data of snapshot {sid} is missing"
    return backend.open(sid, settings.dense_weight, settings.candidates)


def _check(index: SearchIndex, r: Receipt) -> str | None:
    """None when the receipt holds, else the first reason it does not."""
    chunk = index.get_chunk(r.chunk_id)
    if chunk is None:
        return f"chunk {r.chunk_id} is not in snapshot {r.snapshot_id}"
    if chunk.document_id != r.document_id:
        return f"chunk {r.chunk_id} belongs to {chunk.document_id}, not {r.document_id}"
    if chunk.content_sha256 != r.content_sha256:
        return (f"chunk {r.chunk_id} has content hash {chunk.content_sha256[:12]}…, "
                f"the citation says {r.content_sha256[:12]}…")
    if hashlib.sha256(chunk.content.encode()).hexdigest() != chunk.content_sha256:
        return f"stored chunk {r.chunk_id} no longer matches its own content hash"
    if not (chunk.start <= r.start < r.end <= chunk.end):
        return (f"offsets {r.start}..{r.end} lie outside chunk {r.chunk_id} "
                f"({chunk.start}..{chunk.end})")
    doc = index.get_document(r.document_id)
    if doc is None:
        return f"document {r.document_id} is not in snapshot {r.snapshot_id}"
    found = doc.text[r.start : r.end]
    if found != r.quote:
        return f"the text at {r.start}..{r.end} is {found[:60]!r}, not the quote"
    pages = (doc.page_at(r.start), doc.page_at(r.end - 1))
    if (r.page_start, r.page_end) != pages:
        return (f"the quote is on pages {_pages(*pages)} of {r.document_id}, "
                f"the citation says {_pages(r.page_start, r.page_end)}")
    return None


def _pages(first: int | None, last: int | None) -> str:
    return "none" if first is None else f"{first}–{last}" if last != first else str(first)
