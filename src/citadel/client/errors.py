"""What can go wrong when calling a Citadel server: one exception class per kind of error,
each carrying the server's message (which says what to do), its code and the request id."""

from __future__ import annotations

from typing import Any


class CitadelError(Exception):
    """Any failure of a call to a Citadel server."""

    def __init__(self, message: str, *, status: int | None = None, code: str | None = None,
                 request_id: str | None = None, body: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.request_id = request_id
        self.body = body

    def __str__(self) -> str:
        where = f" (HTTP {self.status}" + (f", request {self.request_id}" if self.request_id
                                           else "") + ")" if self.status else ""
        return f"{self.message}{where}"


class ConnectionFailed(CitadelError):
    """The server could not be reached (refused, reset, DNS)."""


class Timeout(CitadelError):
    """The server did not answer within the client's timeout."""


class InvalidRequest(CitadelError):
    """The request was refused as malformed or invalid (400, 413, 415, 422): fix it."""


class AuthenticationError(CitadelError):
    """No API key where one is required, or a key the server does not know (401)."""


class NotFound(CitadelError):
    """No such chunk or document in the served snapshot, or not visible with this key (404)."""


class RateLimited(CitadelError):
    """Too many requests (429): wait and retry."""


class Unavailable(CitadelError):
    """The server cannot answer now (503: no knowledge base yet, or over its limits). The
    client retries these itself before raising."""


class ServerError(CitadelError):
    """A fault of the server's own (5xx other than 503)."""


class StreamError(CitadelError):
    """A stream that had started failed (its `error` event)."""


def error_for(status: int, body: Any) -> CitadelError:
    """The exception for an error response (Citadel's or OpenAI's JSON error shape)."""
    detail = body.get("error") if isinstance(body, dict) else None
    detail = detail if isinstance(detail, dict) else {}
    message = str(detail.get("message") or f"HTTP {status}")
    kind: type[CitadelError] = {
        401: AuthenticationError, 404: NotFound, 429: RateLimited, 503: Unavailable,
    }.get(status) or (InvalidRequest if 400 <= status < 500 else ServerError)
    return kind(message, status=status, code=detail.get("code"),
                request_id=detail.get("request_id"), body=body)
