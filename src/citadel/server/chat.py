"""The OpenAI-compatible door: `POST /v1/chat/completions` (plain and `stream: true`) and
`GET /v1/models`, for the `openai` SDK and chat front-ends that take a base URL and a key.

The key is a Citadel API key (`Authorization: Bearer <key>`) and decides the tenant, as on
`/v1/answer`. The question is the last user message; the user messages before it make a
follow-up stand alone (assistant and system messages are not read). The reply is the gated
answer: its
`[Sn]` markers stay in the content, each with a `url_citation` annotation (the link that opens
the source with the quote highlighted, and the marker's place in the content), and the whole
record is under `citadel` (citations with quotes, offsets, snapshot and content hash;
`abstained`, `conflict`, the request id).

Streaming: a chunk with `citadel.citation` comes before any content whose marker refers to
it (the engine's stream guarantees the order), the content chunks concatenate to the same
text as the plain reply, and the last chunk carries every annotation and the whole record.
Errors have OpenAI's shape (`citadel.server.errors`).
"""

# No `from __future__ import annotations`: FastAPI reads the route signatures.

import json
import time
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.concurrency import run_in_threadpool

from citadel.answering.streaming import CitationEvent, DeltaEvent, DoneEvent, ErrorEvent, MetaEvent
from citadel.engine import InvalidQuestion
from citadel.knowledge.receipts import Signer
from citadel.server.auth import TENANT_SCOPED, TenantScope, tenant_scope
from citadel.server.chat_models import (
    CHAT_ERRORS,
    MODEL_ID,
    ChatRequest,
    Model,
    ModelList,
    annotations,
    completion,
    completion_id,
)
from citadel.server.cited import CitedAnswer, LinkedCitation
from citadel.server.errors import ApiError
from citadel.server.operations import Operations
from citadel.server.request_log import answer_log_fields
from citadel.server.sse import sse_frames
from citadel.server.stream_limits import EventStreamResponse, admitted_stream

CHAT_PATH = "/v1/chat/completions"
Scoped = Annotated[TenantScope, Depends(tenant_scope)]


def page_url(request: Request) -> str:
    """Where citation links open the page: the configured address, else this server's."""
    return request.app.state.provider.settings.public_url or str(request.base_url)


class ChunkWriter:
    """Turns one request's engine events into `chat.completion.chunk` SSE frames."""

    def __init__(self, request_id: str, page: str, created: int, signer: Signer | None
                 ) -> None:
        self.id = completion_id(request_id)
        self.page = page
        self.signer = signer
        self.created = created

    def chunk(self, delta: dict[str, Any], finish: str | None = None,
              citadel: dict[str, Any] | None = None) -> bytes:
        body: dict[str, Any] = {
            "id": self.id, "object": "chat.completion.chunk", "created": self.created,
            "model": MODEL_ID,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish,
                         "logprobs": None}]}
        if citadel is not None:
            body["citadel"] = citadel
        return _data(body)

    def __call__(self, event: Any) -> bytes:
        if isinstance(event, MetaEvent):
            return self.chunk({"role": "assistant", "content": ""}, citadel={
                "request_id": event.request_id, "snapshot_id": event.snapshot_id})
        if isinstance(event, CitationEvent):
            cited = LinkedCitation.of(event.citation, self.page)
            return self.chunk({}, citadel={"citation": cited.model_dump(mode="json")})
        if isinstance(event, DeltaEvent):
            return self.chunk({"content": event.text})
        if isinstance(event, DoneEvent):
            cited = CitedAnswer.of(event.answer, self.page, self.signer)
            return self.chunk({"annotations": annotations(cited.answer, cited.citations)},
                              finish="stop", citadel=cited.model_dump(mode="json")) \
                + b"data: [DONE]\n\n"
        if isinstance(event, ErrorEvent):  # the OpenAI SDK raises on an `error` chunk
            return _data({"error": {"message": event.message, "type": "server_error",
                                    "param": None, "code": event.code,
                                    "request_id": event.request_id}})
        raise TypeError(f"unknown stream event {type(event).__name__}")


def _data(body: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n".encode()


def _question(body: ChatRequest) -> str:
    if body.model != MODEL_ID:
        raise ApiError(404, "model_not_found", f"the model {body.model!r} does not exist: "
                                               f"use {MODEL_ID!r} (GET /v1/models lists it)")
    question = body.question()
    if question is None:
        raise InvalidQuestion("no user message: the question is the last message with "
                              "role \"user\"")
    return question


def chat_router() -> APIRouter:
    router = APIRouter(tags=["OpenAI-compatible"])
    started = int(time.time())

    @router.get("/v1/models", response_model=ModelList, responses={401: CHAT_ERRORS[401]},
                summary="The models this server answers as (one: the knowledge base)",
                openapi_extra=TENANT_SCOPED)
    async def models(scope: Scoped) -> ModelList:
        return ModelList(data=[Model(id=MODEL_ID, created=started)])

    @router.post(CHAT_PATH, responses={**CHAT_ERRORS, 200: {
                     "description": "A `chat.completion`, or with `stream: true` a "
                                    "`text/event-stream` of `chat.completion.chunk`s."}},
                 summary="Answer the last user message with verified citations (OpenAI "
                         "chat-completions shape)", openapi_extra=TENANT_SCOPED)
    async def chat_completions(body: ChatRequest, request: Request, scope: Scoped) -> Any:
        operations: Operations = request.app.state.operations
        question = _question(body)
        options = body.citadel
        kwargs = {"tenant": scope.tenant, "history": body.history(),
                  "top_k": options.top_k if options else None,
                  "category": options.category if options else None,
                  "request_id": request.state.request_id,
                  "client_request_id": request.state.client_request_id}
        created = int(time.time())
        if body.stream:
            with admitted_stream(request) as lease:  # or a 429/503 before any work
                # Validates the question now, so bad input is a 4xx before the stream starts.
                events = await run_in_threadpool(lambda: operations.stream(question, **kwargs))
                writer = ChunkWriter(request.state.request_id, page_url(request), created,
                                     operations.signer)
                frames = sse_frames(events, request, writer, max_seconds=lease.max_seconds)
                return EventStreamResponse(frames, lease)
        answer = await run_in_threadpool(lambda: operations.answer(question, **kwargs))
        request.state.log.update(answer_log_fields(answer))
        return completion(answer, page_url(request), created, operations.signer)

    return router
