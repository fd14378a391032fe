"""Document management over HTTP, for admin keys only (`citadel.server.auth.admin_scope`):
`GET /v1/documents` lists the served snapshot's documents, `POST /v1/documents` uploads
files and `DELETE /v1/documents/{id}` removes one, each change a new validated snapshot
(`citadel.ingest.managed`) that this server serves from its next request.

`GET /v1/documents/{id}` (the source text a citation points into) is not here: it is read by
answering keys, for their tenant (`citadel.server.routes`).
"""

# No `from __future__ import annotations`: FastAPI must see the form parameters' types.

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, File, Form, Query, Request, UploadFile
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, Field
from starlette.types import Scope

from citadel.config import ConfigError
from citadel.engine import Engine, NotReady
from citadel.ingest.managed import (
    MAX_FILES,
    Builders,
    Change,
    ChangeBusy,
    DocumentChangeError,
    InvalidDocument,
    SourcesUnknown,
    TooLarge,
    UnknownDocument,
    UnsupportedType,
    Upload,
    add_documents,
    remove_document,
)
from citadel.ingest.pipeline import IngestError
from citadel.knowledge.changes import Changes
from citadel.knowledge.document_list import MAX_PAGE, DocumentPage, list_documents
from citadel.knowledge.snapshots import Catalog
from citadel.knowledge.source_set import TENANT_PATTERN
from citadel.server.auth import ADMIN_RESPONSES, ApiKeys, admin_scope, presented_key
from citadel.server.deps import get_engine
from citadel.server.errors import ERROR_RESPONSES, ApiError
from citadel.server.models import ErrorBody

UPLOAD_PATH = "/v1/documents"
# A form's own bytes besides its files (boundaries, headers, the metadata fields).
FORM_OVERHEAD = 1 << 20

# Each refusal of `citadel.ingest.managed`, as HTTP says it.
STATUS: dict[type[DocumentChangeError], tuple[int, str]] = {
    UnsupportedType: (415, "unsupported_media_type"),
    TooLarge: (413, "too_large"),
    UnknownDocument: (404, "not_found"),
    ChangeBusy: (409, "change_in_progress"),
    SourcesUnknown: (409, "sources_unknown"),
    InvalidDocument: (422, "invalid_document"),
}
CHANGE_RESPONSES: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorBody, "description": "No document with that id (DELETE)."},
    409: {"model": ErrorBody, "description": "Another ingest or document change is running, "
                                             "or the active snapshot cannot be rebuilt."},
    413: {"model": ErrorBody, "description": "A file over `max_file_bytes`."},
    415: {"model": ErrorBody, "description": "A file type the loaders do not read."},
}


class SkippedFile(BaseModel):
    path: str
    reason: str


class DocumentChange(BaseModel):
    """A document change: the new snapshot, now active, and what changed since the one
    active before."""

    snapshot_id: str
    activated: bool = Field(description="The alias moved to it (false: it was already "
                                        "active, e.g. an upload of unchanged files).")
    documents: list[str] = Field(description="The ids of the documents uploaded.")
    changes: Changes
    embedded: int = Field(description="Chunks embedded for this build; the others came from "
                                      "the embedding cache.")
    skipped: list[SkippedFile] = Field(description="Files of the sources that could not be "
                                                   "read, with the reason.")


def upload_limit(keys: ApiKeys, max_file_bytes: int) -> Callable[[Scope], int | None]:
    """The body limit of an upload with an admin key (`BodyLimitMiddleware.larger`): its
    files together up to `max_file_bytes`, plus the form; None (the small limit) for any
    other request."""

    def larger(scope: Scope) -> int | None:
        if scope.get("method") != "POST" or scope.get("path") != UPLOAD_PATH:
            return None
        headers = {k.lower(): v.decode("latin-1") for k, v in scope.get("headers", ())}
        key = presented_key(headers.get(b"authorization"), headers.get(b"x-api-key"))
        return max_file_bytes + FORM_OVERHEAD if keys.is_admin(key) else None

    return larger


def documents_router() -> APIRouter:
    router = APIRouter(tags=["documents"], dependencies=[Depends(admin_scope)],
                       responses={**ADMIN_RESPONSES, **ERROR_RESPONSES})

    @router.get(UPLOAD_PATH, response_model=DocumentPage,
                summary="The served snapshot's documents (admin key)")
    def list_(engine: Annotated[Engine, Depends(get_engine)],
              tenant: Annotated[str | None, Query(max_length=200, description=(
                  "Only this tenant's documents; empty: only public ones; absent: all."))]
              = None,
              limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
              offset: Annotated[int, Query(ge=0)] = 0) -> DocumentPage:
        manifest = Catalog(engine.settings.home).read_manifest(engine.index.snapshot_id)
        if manifest is None:
            raise NotReady(f"snapshot {engine.index.snapshot_id} has no manifest")
        return list_documents(engine.index, manifest, tenant=tenant, offset=offset,
                              limit=limit)

    @router.post(UPLOAD_PATH, response_model=DocumentChange, status_code=201,
                 responses=CHANGE_RESPONSES,
                 summary="Upload documents: a new snapshot with them (admin key)")
    async def add(
        request: Request,
        files: Annotated[list[UploadFile], File(description=(
            f"One or more files (at most {MAX_FILES}): Markdown, text, HTML, PDF, Word. A "
            "file whose name maps to an existing document's id replaces it."))],
        authority: Annotated[float | None, Form(ge=0.0, le=1.0)] = None,
        tenant: Annotated[str | None, Form(pattern=TENANT_PATTERN, description=(
            "Whose documents they are: only that tenant's keys retrieve them."))] = None,
        supersedes: Annotated[str | None, Form(min_length=1, max_length=500, description=(
            "The id of the document they replace as evidence."))] = None,
    ) -> DocumentChange:
        uploads = [Upload(f.filename or "", await f.read()) for f in files]
        return await _change(request, add_documents, uploads, authority=authority,
                             tenant=tenant, supersedes=supersedes)

    @router.delete(UPLOAD_PATH + "/{document_id:path}", response_model=DocumentChange,
                   responses=CHANGE_RESPONSES,
                   summary="Remove a document: a new snapshot without it (admin key)")
    async def remove(document_id: str, request: Request) -> DocumentChange:
        return await _change(request, remove_document, document_id)

    return router


async def _change(request: Request, change: Callable[..., Change], *args: Any,
                  **kwargs: Any) -> DocumentChange:
    """Run a change off the event loop, in one of the answer slots (it embeds), then serve
    its snapshot from the next request."""
    provider = request.app.state.provider
    served = provider.peek()
    builders = Builders(embedder=served.embedder if served else None,
                        analyser=served.judge.analyser if served else None)
    try:
        done = await run_in_threadpool(provider.call, change, provider.settings, *args,
                                       builders=builders, **kwargs)
    except DocumentChangeError as exc:
        status, code = STATUS.get(type(exc), (422, "invalid_document"))
        raise ApiError(status, code, str(exc)) from None
    except (IngestError, ConfigError) as exc:  # the sources refuse the change (a rule)
        raise ApiError(422, "build_refused", str(exc)) from None
    await run_in_threadpool(provider.check_now)
    report = done.report
    request.state.log.update(snapshot_id=report.snapshot_id)
    return DocumentChange(
        snapshot_id=report.snapshot_id, activated=report.activated,
        documents=list(done.documents), changes=report.changes, embedded=report.embedded,
        skipped=[SkippedFile(path=s.path, reason=s.reason) for s in report.skipped])
