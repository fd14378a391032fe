"""JSON endpoints: answers, chunk and document lookup, health, readiness and what the page
offers."""

# No `from __future__ import annotations`: FastAPI must see the per-app request model itself.

from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from citadel.engine import Engine, NotReady
from citadel.knowledge.signing import KeyStore, PublicKeys
from citadel.knowledge.snapshots import Catalog, Examples
from citadel.knowledge.verify import VerifyError, VerifyReport
from citadel.records import Answer
from citadel.retrieval.tenancy import visible
from citadel.server.auth import (
    AUTH_RESPONSES,
    TENANT_SCOPED,
    TenantScope,
    Unauthorized,
    presented_key,
    tenant_scope,
)
from citadel.server.deps import get_engine
from citadel.server.errors import ERROR_RESPONSES
from citadel.server.models import (
    About,
    AnswerRequest,
    ChunkView,
    DocumentView,
    ErrorBody,
    Health,
    Readiness,
    SearchRequest,
    SearchResults,
    VerifyRequest,
)
from citadel.server.operations import Operations
from citadel.server.public_errors import public_message
from citadel.server.readiness import readiness
from citadel.server.request_log import answer_log_fields

NOT_FOUND = {404: {"model": ErrorBody, "description": "No such item in the served snapshot, "
                                                     "or not visible with the request's key."}}
# The tenant whose documents (and public ones) a request may see: its API key's, never a
# request field (citadel.server.auth).
Scoped = Annotated[TenantScope, Depends(tenant_scope)]


def api_router(request_model: type[AnswerRequest]) -> APIRouter:
    router = APIRouter()

    @router.post("/v1/answer", response_model=Answer, tags=["answers"],
                 responses={**AUTH_RESPONSES, **ERROR_RESPONSES},
                 summary="Answer a question with verified citations", openapi_extra=TENANT_SCOPED)
    async def answer(body: request_model, request: Request,  # type: ignore[valid-type]
                     scope: Scoped, engine: Annotated[Engine, Depends(get_engine)]) -> Answer:
        result = await run_in_threadpool(
            request.app.state.provider.call, engine.answer, body.question,
            history=body.turns(), top_k=body.top_k, tenant=scope.tenant, category=body.category,
            request_id=request.state.request_id,
            client_request_id=request.state.client_request_id,
        )
        request.state.log.update(answer_log_fields(result))
        return result

    @router.post("/v1/search", response_model=SearchResults, tags=["sources"],
                 responses={**AUTH_RESPONSES, **ERROR_RESPONSES},
                 summary="The chunks retrieval ranks highest for a query (no answer)",
                 openapi_extra=TENANT_SCOPED)
    async def search(body: SearchRequest, request: Request, scope: Scoped) -> SearchResults:
        operations: Operations = request.app.state.operations
        return await run_in_threadpool(operations.search, body.query, tenant=scope.tenant,
                                       k=body.k, category=body.category)

    @router.post("/v1/verify", response_model=VerifyReport, tags=["answers"],
                 responses={**AUTH_RESPONSES, **ERROR_RESPONSES},
                 summary="Re-check a saved answer's citations (as `citadel verify` does)",
                 openapi_extra=TENANT_SCOPED)
    async def verify(body: VerifyRequest, request: Request, scope: Scoped) -> VerifyReport:
        operations: Operations = request.app.state.operations
        raw = await request.json()  # as sent: a door's fields (links) are checked too
        try:
            return await run_in_threadpool(operations.verify, raw, tenant=scope.tenant,
                                           page=str(request.base_url))
        except VerifyError as exc:
            raise HTTPException(422, f"not an answer to verify: {exc}") from None

    @router.get("/v1/chunks/{chunk_id:path}", response_model=ChunkView, tags=["sources"],
                responses={**AUTH_RESPONSES, **ERROR_RESPONSES, **NOT_FOUND},
                summary="A stored chunk", openapi_extra=TENANT_SCOPED)
    def chunk(chunk_id: str, scope: Scoped, engine: Annotated[Engine, Depends(get_engine)],
              window: Annotated[int, Query(ge=0, le=20_000, description=(
                  "Characters of source text to include on each side of the chunk."))] = 400,
              ) -> ChunkView:
        found = engine.index.get_chunk(chunk_id)
        if found is None or not visible(found.tenant, scope.tenant):
            raise HTTPException(404, f"no chunk {chunk_id!r} in snapshot "
                                     f"{engine.index.snapshot_id}")
        document = engine.index.get_document(found.document_id)
        return ChunkView.of(found, document, engine.index.snapshot_id, window)

    @router.get("/v1/documents/{document_id:path}", response_model=DocumentView,
                tags=["sources"], responses={**AUTH_RESPONSES, **ERROR_RESPONSES, **NOT_FOUND},
                summary="A source document with its chunks' offsets",
                openapi_extra=TENANT_SCOPED)
    def document(document_id: str, scope: Scoped,
                 engine: Annotated[Engine, Depends(get_engine)]) -> DocumentView:
        found = engine.index.get_document(document_id)
        if found is None or not visible(found.tenant, scope.tenant):
            raise HTTPException(404, f"no document {document_id!r} in snapshot "
                                     f"{engine.index.snapshot_id}")
        return DocumentView.of(found, engine.index.chunks_of(document_id),
                               engine.index.snapshot_id)

    @router.get("/v1/keys", response_model=PublicKeys, tags=["answers"],
                summary="The public keys that sign answers (to check receipts offline)")
    def keys(request: Request) -> PublicKeys:
        # Public by design: anyone holding a receipt must be able to check it.
        return KeyStore(request.app.state.provider.settings.home).public_keys()

    @router.get("/healthz", response_model=Health, tags=["operations"],
                summary="The process is alive")
    def healthz() -> Health:
        return Health()

    @router.get("/readyz", response_model=Readiness, tags=["operations"],
                responses={503: {"model": Readiness, "description": "Not ready, with reason."}},
                summary="The served snapshot is complete, compatible and active")
    def readyz(request: Request) -> JSONResponse:
        # Answered with or without a key (health checkers have none); an unknown key, or
        # none where keys are required, counts public documents only.
        try:
            tenant = request.app.state.api_keys.scope(presented_key(
                request.headers.get("authorization"), request.headers.get("x-api-key"))).tenant
        except Unauthorized:
            tenant = None
        try:
            provider = request.app.state.provider
            engine = provider.get()
            documents = request.app.state.document_counts.visible_to(engine, tenant)
            state = readiness(engine, provider.switch_problem, documents=documents)
        except NotReady as exc:
            state = Readiness(ready=False, reason=public_message(
                str(exc), request.app.state.provider.settings.home))
        return JSONResponse(state.model_dump(mode="json"), status_code=200 if state.ready
                            else 503)

    @router.get("/v1/about", response_model=About, tags=["operations"],
                summary="What the web page offers: example questions, customer support")
    def about(request: Request) -> About:
        # Public, like the page and /readyz: the examples are the operator's, for every visitor.
        customer_support = request.app.state.agents.available()
        try:
            engine = request.app.state.provider.get()
        except NotReady:
            return About(customer_support=customer_support)
        snapshot_id = engine.index.snapshot_id
        info = Catalog(engine.settings.home).get(snapshot_id)
        return About(snapshot_id=snapshot_id, customer_support=customer_support,
                     examples=info.examples if info is not None else Examples())

    return router
