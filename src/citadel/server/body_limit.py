"""Refuse oversized request bodies with a 413 JSON error before any handler reads them.

Bodies here are small JSON documents, so the body is read (up to the limit) and handed to the
app in one piece; the server never buffers more than the limit for one request. A body whose
`Content-Length` already says it is too large is refused from the header, at once: waiting
for it would let a client that never sends it hold the connection for the whole body timeout.
A refusal closes the connection (`Connection: close`), since the rest of the body is unread.

One kind of request may be larger: a document upload with an admin key (`larger`, see
`citadel.server.documents.upload_limit`); any other request, an upload without that key
included, keeps the small limit, so only an admin can make the server hold a large body.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from citadel.server.errors import openai_error, openai_style


class BodyLimitMiddleware:
    def __init__(self, app: ASGIApp, max_bytes: int,
                 larger: Callable[[Scope], int | None] | None = None) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.larger = larger  # a request's own limit, when it may send more

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = (self.larger(scope) if self.larger else None) or self.max_bytes
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            await self._refuse(scope, send, f"declares {declared} bytes, over", limit)
            return
        if scope.get("method") not in {"POST", "PUT", "PATCH"}:
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return  # the client left before sending its body
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await self._refuse(scope, send, "is over", limit)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # later calls: disconnect detection

        await self.app(scope, replay, send)

    async def _refuse(self, scope: Scope, send: Send, what: str, limit: int) -> None:
        message = f"the request body {what} the limit of {limit} bytes: send a smaller body"
        request_id = scope.get("state", {}).get("request_id")
        if openai_style(scope.get("path", "")):
            payload = json.dumps(openai_error(413, message, "too_large", request_id)[1])
        else:
            payload = json.dumps({"error": {"code": "too_large", "errors": [],
                                            "message": message, "request_id": request_id}})
        body = payload.encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})


def _content_length(scope: Scope) -> int | None:
    """The declared body size, if the request gives one (h11 has refused a malformed one)."""
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            return int(value) if value.isdigit() else None
    return None
