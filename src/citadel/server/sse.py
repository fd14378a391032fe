"""`POST /v1/answer/stream`: the engine's stream events as Server-Sent Events.

Each event is `event: <type>` plus one `data:` line of JSON (the event record). The engine's
iterator is synchronous (retrieval and generation are blocking), so each step runs in the
thread pool; between steps the server checks whether the client is still there, and when the
client goes away, or the stream ends in any way, the iterator is closed (its `finally` blocks
run) and the stream is unregistered: nothing outlives its request. When the server drains
(`citadel.server.drain`), a stream still open near the deadline ends with an `error` event
of code `shutting_down` at once, even in the middle of a step; that step's iterator is
closed when the step returns. A stream that reaches its time limit ends the same way, with
code `stream_timeout`; who may open a stream, and for how long, is
`citadel.server.stream_limits`.
"""

# No `from __future__ import annotations`: FastAPI must see the per-app request model itself.

import asyncio
import logging
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Depends, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import StreamingResponse
from pydantic import TypeAdapter

from citadel.answering.streaming import DoneEvent, ErrorEvent, StreamEvent
from citadel.engine import Engine
from citadel.server.auth import AUTH_RESPONSES, TENANT_SCOPED, TenantScope, tenant_scope
from citadel.server.deps import get_engine
from citadel.server.drain import SHUTTING_DOWN, SHUTTING_DOWN_MESSAGE, Drain
from citadel.server.errors import ERROR_RESPONSES
from citadel.server.models import AnswerRequest
from citadel.server.request_log import answer_log_fields
from citadel.server.stream_limits import (
    STREAM_TIMEOUT,
    EventStreamResponse,
    admitted_stream,
)

log = logging.getLogger("citadel.http")

STREAM_PATH = "/v1/answer/stream"
_EVENT = TypeAdapter(StreamEvent)


class StreamRegistry:
    """The streams of one app that are still open (their request ids): for leak checks."""

    def __init__(self) -> None:
        self._open: set[str] = set()
        self._lock = threading.Lock()

    def add(self, request_id: str) -> None:
        with self._lock:
            self._open.add(request_id)

    def discard(self, request_id: str) -> None:
        with self._lock:
            self._open.discard(request_id)

    def open(self) -> frozenset[str]:
        with self._lock:
            return frozenset(self._open)


def encode(event: Any) -> bytes:
    """One SSE frame. JSON never contains a raw newline, so one `data:` line suffices."""
    return f"event: {event.type}\ndata: {event.model_dump_json()}\n\n".encode()


async def sse_frames(events: Iterator[Any], request: Request,
                     frame: Callable[[Any], bytes] = encode, *,
                     max_seconds: float | None = None) -> AsyncIterator[bytes]:
    """The stream's frames: `frame(event)` for each engine event (another door writes its
    own wire format, e.g. the chat-completions chunks), an `ErrorEvent` if the engine fails
    after the stream started, and a final `ErrorEvent` when the stream must end before the
    engine is done: the server drains (`shutting_down`), or the stream has lasted
    `max_seconds` (`stream_timeout`, `citadel.server.stream_limits`)."""
    request_id: str = request.state.request_id
    registry: StreamRegistry = request.app.state.streams
    provider = request.app.state.provider
    drain: Drain | None = getattr(request.app.state, "drain", None)
    # Futures that end the stream early, each with its final event's code, message and the
    # request-log field that records it.
    ends: dict[asyncio.Future[None], tuple[str, str, str]] = {}
    if drain is not None:
        ends[drain.stream_end()] = (SHUTTING_DOWN, SHUTTING_DOWN_MESSAGE, "ended_by_drain")
    timer = None
    if max_seconds is not None:
        expired: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        timer = asyncio.get_running_loop().call_later(max_seconds, _resolve, expired)
        ends[expired] = (STREAM_TIMEOUT, f"the stream reached its limit of {max_seconds:g} s "
                         "and was ended before its answer was complete: ask again, or ask "
                         "without streaming", "ended_by_time_limit")
    step: asyncio.Future[Any] | None = None
    abandoned = False  # ended early in the middle of a step
    registry.add(request_id)
    try:
        while True:
            if await request.is_disconnected():
                request.state.log["client_disconnected"] = True
                return
            ended = [end for end in ends if end.done()]
            if not ended:  # the next step, unless an end comes first
                step = asyncio.ensure_future(run_in_threadpool(provider.call, next, events,
                                                               None))
                if ends:
                    await asyncio.wait({step, *ends}, return_when=asyncio.FIRST_COMPLETED)
                ended = [end for end in ends if end.done() and not step.done()]
            if ended:  # a final event, not a cut
                abandoned = step is not None and not step.done()
                code, message, field = ends[ended[0]]
                request.state.log[field] = True
                yield frame(ErrorEvent(code=code, message=message, request_id=request_id))
                return
            assert step is not None
            try:
                event = await step
            except Exception as exc:  # the status line is sent: report in-band, then stop
                log.exception("stream %s failed", request_id)
                yield frame(ErrorEvent(code="internal",
                                       message=f"the answer failed: {type(exc).__name__}",
                                       request_id=request_id))
                return
            if event is None:
                return
            if isinstance(event, DoneEvent):
                request.state.log.update(answer_log_fields(event.answer))
            yield frame(event)
    finally:
        if timer is not None:
            timer.cancel()
        if drain is not None:
            for end in ends:
                drain.forget(end)
        with anyio.CancelScope(shield=True):
            if step is not None and not abandoned:
                await _settled(step)  # a client that left: its step finishes first
            if step is None or step.done():
                await _close(events, registry, request_id)
            else:  # ended early mid-step: closed once the step returns
                leftover = asyncio.ensure_future(_close_after(step, events, registry,
                                                              request_id))
                _LEFTOVERS.add(leftover)
                leftover.add_done_callback(_LEFTOVERS.discard)


# Streams ended early whose step is still running in a worker thread: their iterators are
# closed when the step returns (held here so the closing task is not garbage-collected).
_LEFTOVERS: set[asyncio.Task[None]] = set()


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


async def _close(events: Iterator[Any], registry: StreamRegistry, request_id: str) -> None:
    """Close the engine's iterator (its `finally` blocks run) and unregister the stream."""
    close = getattr(events, "close", None)
    try:
        if close is not None:
            await run_in_threadpool(close)
    finally:
        registry.discard(request_id)


async def _settled(step: asyncio.Future[Any]) -> None:
    """Wait for a step whose outcome nobody reads any more (its error included)."""
    await asyncio.wait({step})
    if not step.cancelled():
        step.exception()


async def _close_after(step: asyncio.Future[Any], events: Iterator[Any],
                       registry: StreamRegistry, request_id: str) -> None:
    await _settled(step)
    await _close(events, registry, request_id)


def stream_router(request_model: type[AnswerRequest]) -> APIRouter:
    router = APIRouter()

    @router.post(
        STREAM_PATH, tags=["answers"], response_class=StreamingResponse,
        summary="Answer a question as Server-Sent Events", openapi_extra=TENANT_SCOPED,
        description="Events: `meta`, then `citation` and `delta` (a citation always before "
                    "any text whose `[Sn]` marker refers to it), then `done` with the final "
                    "`Answer`, or `error`.",
        responses={**AUTH_RESPONSES, **ERROR_RESPONSES, 200: {
            "description": "A `text/event-stream` of `StreamEvent`s.",
            "content": {"text/event-stream": {}},  # itemSchema added by document_stream_events
        }},
    )
    async def answer_stream(body: request_model, request: Request,  # type: ignore[valid-type]
                            scope: Annotated[TenantScope, Depends(tenant_scope)],
                            engine: Annotated[Engine, Depends(get_engine)]
                            ) -> StreamingResponse:
        with admitted_stream(request) as lease:  # or a 429/503 before any work
            # Validates the question now, so bad input is a 4xx before the stream starts.
            events = engine.stream(body.question, history=body.turns(), top_k=body.top_k,
                                   tenant=scope.tenant,
                                   category=body.category,
                                   request_id=request.state.request_id,
                                   client_request_id=request.state.client_request_id)
            frames = sse_frames(events, request, max_seconds=lease.max_seconds)
            return EventStreamResponse(frames, lease)

    return router


def document_stream_events(openapi: dict[str, Any]) -> dict[str, Any]:
    """Put the event records into the OpenAPI components and describe the stream's items."""
    schema = _EVENT.json_schema(ref_template="#/components/schemas/{model}")
    components = openapi.setdefault("components", {}).setdefault("schemas", {})
    for name, definition in schema.pop("$defs", {}).items():
        components.setdefault(name, definition)
    components["StreamEvent"] = schema
    content = openapi["paths"][STREAM_PATH]["post"]["responses"]["200"]["content"]
    content["text/event-stream"]["itemSchema"] = {
        "type": "object", "required": ["event", "data"],
        "properties": {"event": {"type": "string"},
                       "data": {"type": "string", "contentMediaType": "application/json",
                                "contentSchema": {"$ref": "#/components/schemas/StreamEvent"}}},
    }
    return openapi
