"""Long-lived responses (answer and chat streams): counted against their caller, bounded in
time, and never more than half of the server's connections.

A connection whose request is being answered is never shed (`citadel.server.limits` sheds only
connections still sending headers), so a response that lasts holds its connection slot for
as long as it lasts. Unbounded, 40 streams from three addresses held every slot of a server
limited to 40 connections, and every other request met 503 `server_busy` for as long as they
stayed open. So every long-lived response is admitted here before it starts:

* per client address (`http_max_streams_per_client`) and per API key
  (`http_max_streams_per_key`): one more is a 429 `too_many_streams` with `Retry-After`, so a
  caller that holds many pays for them itself;
* in all: at most `http_max_streams`, and never more than half of `http_max_connections`, so
  the other half always stays for ordinary requests: one more is a 503 `too_many_streams`;
* in time: `http_stream_max_seconds`, after which the stream ends with a final `error` event
  of code `stream_timeout` (`citadel.server.sse`); a client that does not read its stream,
  so that event cannot be written, is cut `CUT_GRACE` seconds later (`EventStreamResponse`).

A refusal comes before any engine work and in the door's own error shape (`ApiError`). The
counts are per process, like every limit of the server (per worker with `--workers`).
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import anyio
from fastapi import Request
from fastapi.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from citadel.config import Settings
from citadel.server.auth import presented_key
from citadel.server.errors import ApiError

log = logging.getLogger("citadel.http")

TOO_MANY_STREAMS = "too_many_streams"
STREAM_TIMEOUT = "stream_timeout"
# A stream past its time that could not write its final event (its client does not read) is
# cut this long after the deadline.
CUT_GRACE = 5.0
RETRY_AFTER = "2"


@dataclass(frozen=True)
class StreamLimits:
    per_client: int  # 0: no cap
    per_key: int  # 0: no cap
    total: int
    max_seconds: float

    @classmethod
    def from_settings(cls, settings: Settings) -> StreamLimits:
        half = max(1, settings.http_max_connections // 2)
        return cls(per_client=settings.http_max_streams_per_client,
                   per_key=settings.http_max_streams_per_key,
                   total=min(settings.http_max_streams, half),
                   max_seconds=settings.http_stream_max_seconds)


@dataclass(frozen=True)
class Caller:
    """Who a stream counts against: its client address and the digest of its API key."""

    address: str
    key: str | None  # sha256 hex of the presented key; None without one

    @classmethod
    def of(cls, request: Request) -> Caller:
        key = presented_key(request.headers.get("authorization"),
                            request.headers.get("x-api-key"))
        return cls(address=request.client.host if request.client else "unknown",
                   key=hashlib.sha256(key.encode()).hexdigest() if key is not None else None)


class StreamLease:
    """One admitted stream's place in the counts, and how long it may last; `release` gives
    the place back (once)."""

    def __init__(self, counts: StreamCounts, caller: Caller) -> None:
        self._counts = counts
        self.caller = caller
        self.max_seconds = counts.limits.max_seconds
        self._held = True

    def release(self) -> None:
        if self._held:
            self._held = False
            self._counts.release(self.caller)


class StreamCounts:
    """The long-lived responses of one app that are open: in all, per address, per key."""

    def __init__(self, limits: StreamLimits) -> None:
        self.limits = limits
        self.open = 0
        self._by_address: Counter[str] = Counter()
        self._by_key: Counter[str] = Counter()
        self._lock = threading.Lock()

    def admit(self, caller: Caller) -> StreamLease:
        """A lease for one more stream of `caller`, or an `ApiError` saying which limit."""
        limits = self.limits
        with self._lock:
            if limits.per_client and self._by_address[caller.address] >= limits.per_client:
                raise _refusal(429, f"your address already has {limits.per_client} streams "
                                    "open, its limit: wait for one to end, then retry")
            if (caller.key is not None and limits.per_key
                    and self._by_key[caller.key] >= limits.per_key):
                raise _refusal(429, f"your API key already has {limits.per_key} streams open, "
                                    "its limit: wait for one to end, then retry")
            if self.open >= limits.total:
                raise _refusal(503, f"the server has {limits.total} streams open, its limit: "
                                    "retry shortly, or ask without streaming")
            self.open += 1
            self._by_address[caller.address] += 1
            if caller.key is not None:
                self._by_key[caller.key] += 1
        return StreamLease(self, caller)

    def release(self, caller: Caller) -> None:
        with self._lock:
            self.open -= 1
            _decrement(self._by_address, caller.address)
            if caller.key is not None:
                _decrement(self._by_key, caller.key)

    def count(self, caller: Caller) -> tuple[int, int]:
        """Open streams of `caller`'s address and of its key."""
        with self._lock:
            return (self._by_address[caller.address],
                    self._by_key[caller.key] if caller.key is not None else 0)


def _decrement(counter: Counter[str], name: str) -> None:
    counter[name] -= 1
    if counter[name] <= 0:
        del counter[name]


def _refusal(status: int, message: str) -> ApiError:
    log.warning("refused a stream: %s", message)
    return ApiError(status, TOO_MANY_STREAMS, message, headers={"Retry-After": RETRY_AFTER})


@contextmanager
def admitted_stream(request: Request) -> Iterator[StreamLease]:
    """Count one more long-lived response against the request's caller (or refuse it with
    an `ApiError`, before any work). The lease goes to the response the block returns; if
    the block fails instead (a bad question), it is released."""
    counts: StreamCounts = request.app.state.stream_counts
    lease = counts.admit(Caller.of(request))
    try:
        yield lease
    except BaseException:
        lease.release()
        raise


class EventStreamResponse(StreamingResponse):
    """A `text/event-stream` response that holds its `lease` until it ends, however it ends,
    and is cut `CUT_GRACE` seconds after the lease's `max_seconds` if it has not ended by
    itself (its frames end it at `max_seconds` when they can still be written)."""

    def __init__(self, content: AsyncIterator[bytes], lease: StreamLease) -> None:
        super().__init__(content, media_type="text/event-stream",
                         headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
        self.lease = lease
        self.max_seconds = lease.max_seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            with anyio.move_on_after(self.max_seconds + CUT_GRACE) as cut:
                await super().__call__(scope, receive, send)
            if cut.cancelled_caught:
                log.warning("cut a stream that outlived its %g s (its client was not "
                            "reading)", self.max_seconds)
                fields = scope.get("state", {}).get("log")
                if isinstance(fields, dict):  # the request's log line says so
                    fields["cut_after_time_limit"] = True
        finally:
            self.lease.release()
            close: Any = getattr(self.body_iterator, "aclose", None)
            if close is not None:  # a cut stream's frames: their cleanup runs now
                with anyio.CancelScope(shield=True):
                    await close()
