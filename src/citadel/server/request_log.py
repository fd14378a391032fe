"""One structured (JSON) log line per request, and the request id it is known by.

The server makes every request id (so a log record is never shadowed by another with the same
id) and returns it in `X-Request-ID`. A client's own id, from a well-formed
`X-Client-Request-ID` or else `X-Request-ID` header, is kept beside it as
`client_request_id` and echoed in `X-Client-Request-ID`. Both are passed to the engine (so
they land in the answer's trace and the request log) and logged. Handlers
add what they learned (snapshot, citations) to `request.state.log`; the line is written when
the response has been sent, so a stream's latency covers the whole stream.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from citadel.records import Answer

log = logging.getLogger("citadel.http")

_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
# nginx's "client closed request": the client left before a response was sent. Not a 5xx,
# which would page someone for a fault that is not ours.
CLIENT_CLOSED = 499
PER_REQUEST = "per_request"  # marks the one line per request on its log record


# The client's id, by preference: X-Client-Request-ID names it unambiguously (OpenAI's API
# takes the same header); proxies and tracing set X-Request-ID.
_CLIENT_HEADERS = (b"x-client-request-id", b"x-request-id")


def client_request_id_from(headers: list[tuple[bytes, bytes]]) -> str | None:
    """The client's own id for the request, if it sent a well-formed one."""
    found = {key.lower(): value for key, value in headers}
    for name in _CLIENT_HEADERS:
        candidate = found.get(name, b"").decode("latin-1")
        if _REQUEST_ID.fullmatch(candidate):
            return candidate
    return None


def answer_log_fields(answer: Answer) -> dict[str, Any]:
    t = answer.trace
    return {"snapshot_id": t.snapshot_id, "backend": t.backend,
            "citations_emitted": t.citations_emitted,
            "citations_dropped": len(t.citations_dropped),
            "grounded": answer.grounded, "abstained": answer.abstained,
            "degraded": answer.degraded,
            **({"follow_up": answer.standalone.how} if answer.standalone else {})}


class RequestLogMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = uuid.uuid4().hex
        client_request_id = client_request_id_from(scope.get("headers", []))
        state = scope.setdefault("state", {})
        state["request_id"] = request_id
        state["client_request_id"] = client_request_id
        id_headers = [(b"x-request-id", request_id.encode())]
        if client_request_id is not None:
            id_headers.append((b"x-client-request-id", client_request_id.encode()))
        state["log"] = {}
        status: int | None = None
        complete = disconnected = False
        started = time.perf_counter()

        async def receive_watching() -> Message:
            nonlocal disconnected
            message = await receive()
            if message["type"] == "http.disconnect" and not complete:
                disconnected = True  # gone before the whole response was sent
            return message

        async def send_with_id(message: Message) -> None:
            nonlocal status, complete
            if message["type"] == "http.response.start":
                status = message["status"]
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], *id_headers]
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                complete = True
            await send(message)

        try:
            await self.app(scope, receive_watching, send_with_id)
        finally:
            if status is None:  # no response: the client left, or the app failed (uvicorn 500)
                status = CLIENT_CLOSED if disconnected else 500
            if disconnected:
                state.setdefault("log", {})["client_disconnected"] = True
            line = {"event": "http_request", "request_id": request_id,
                    "client_request_id": client_request_id,
                    "method": scope.get("method"), "path": scope.get("path"), "status": status,
                    "latency_ms": round((time.perf_counter() - started) * 1000, 2),
                    "snapshot_id": None, "backend": None,
                    "citations_emitted": 0, "citations_dropped": 0}
            line.update(state.get("log") or {})
            # per_request: the server's log rate limit leaves these lines alone (log_rate.py).
            log.info(json.dumps(line, default=str), extra={PER_REQUEST: True})
