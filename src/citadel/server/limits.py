"""Connection limits for `citadel serve`: idle, slow and greedy clients cannot starve others.

uvicorn (0.55, h11) arms its keep-alive timer only after a response, and any byte cancels it:
a socket that never sends, or sends its headers one byte a second (slowloris), stays open
forever, and a few clients holding thousands of them exhaust the process's file descriptors
so `/healthz` stops answering. `guarded_protocol` is uvicorn's h11 protocol plus

* a header timeout: a request's headers must arrive within `http_header_timeout` seconds of
  the connection opening (or of the previous response), however slowly they trickle;
* a body timeout: its body within `http_body_timeout` seconds of its headers;
* a cap on open connections per client IP: more are answered 503 and closed at once;
* the start of a graceful shutdown passed on to the app (`citadel.server.drain`).

`server_config` adds uvicorn's own bounds (`limit_concurrency`, keep-alive timeout, maximum
header size) and is what `citadel serve` runs.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from citadel.config import Settings
from citadel.server.drain import DRAIN_STATE

log = logging.getLogger("citadel.http.limits")

# Request line plus headers; more is refused with 400 by h11 (its default, made explicit).
MAX_HEADER_BYTES = 16 * 1024


@dataclass(frozen=True)
class ConnectionLimits:
    header_timeout: float
    body_timeout: float
    max_per_client: int  # 0: no cap

    @classmethod
    def from_settings(cls, settings: Settings) -> ConnectionLimits:
        return cls(header_timeout=settings.http_header_timeout,
                   body_timeout=settings.http_body_timeout,
                   max_per_client=settings.http_max_connections_per_client)


class ClientConnections:
    """Open connections per client address, for one server (all its protocol instances run
    on one event loop thread, so no lock is needed)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._open: dict[str, int] = {}

    def admit(self, address: str) -> bool:
        count = self._open.get(address, 0)
        if self.cap and count >= self.cap:
            return False
        self._open[address] = count + 1
        return True

    def release(self, address: str) -> None:
        count = self._open.get(address, 0) - 1
        if count > 0:
            self._open[address] = count
        else:
            self._open.pop(address, None)

    def count(self, address: str) -> int:
        return self._open.get(address, 0)


def _raw_response(status: int, reason: str, message: str, code: str,
                  extra: tuple[str, ...] = ()) -> bytes:
    """A complete HTTP/1.1 error response, for moments when h11 has no request to answer."""
    body = json.dumps({"error": {"code": code, "message": message, "errors": [],
                                 "request_id": None}}).encode()
    head = [f"HTTP/1.1 {status} {reason}", "content-type: application/json",
            f"content-length: {len(body)}", "connection: close", *extra]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def guarded_protocol(limits: ConnectionLimits) -> type[H11Protocol]:
    """uvicorn's h11 protocol with header/body read timeouts and a per-client cap; each call
    makes a class with its own connection counts (one per server)."""
    clients = ClientConnections(limits.max_per_client)
    too_many = _raw_response(
        503, "Service Unavailable",
        f"too many open connections from your address (at most {limits.max_per_client}): "
        "reuse or close connections, then retry", "too_many_connections", ("retry-after: 1",))
    too_slow = _raw_response(
        408, "Request Timeout",
        f"the request's headers did not arrive within {limits.header_timeout:g} s: send the "
        "whole request at once", "request_timeout")

    class GuardedH11Protocol(H11Protocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._peer: str | None = None  # counted in `clients` while set
            self._refused = False
            self._timer: asyncio.TimerHandle | None = None
            self._awaiting: str | None = None  # "headers" | "body" | None (request read)

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            peer = self.client[0] if self.client else "unknown"
            if not clients.admit(peer):
                self._refused = True
                log.warning("refused a connection from %s: it already has %d open", peer,
                            clients.count(peer))
                transport.write(too_many)
                transport.close()
                return
            self._peer = peer
            self._expect("headers")

        def connection_lost(self, exc: Exception | None) -> None:
            self._cancel_timer()
            if self._peer is not None:
                clients.release(self._peer)
                self._peer = None
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self._refused:
                return
            super().data_received(data)
            self._follow()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._follow()

        def shutdown(self) -> None:
            # The server is draining (citadel.server.drain): tell the app, once per server.
            drain = self.app_state.get(DRAIN_STATE)
            if drain is not None:
                drain.begin(self.config.timeout_graceful_shutdown)
            super().shutdown()

        def _follow(self) -> None:
            """Time whichever part of the request is being read now."""
            if self.transport.is_closing():
                self._cancel_timer()
            elif self.conn.their_state is h11.IDLE:
                self._expect("headers")
            elif self.conn.their_state is h11.SEND_BODY:
                self._expect("body")
            else:  # the request has been read (or the connection is ending)
                self._cancel_timer()
                self._awaiting = None

        def _expect(self, part: str) -> None:
            if self._awaiting == part and self._timer is not None:
                return  # already timing it: trickling bytes do not extend the deadline
            self._cancel_timer()
            self._awaiting = part
            delay = limits.header_timeout if part == "headers" else limits.body_timeout
            self._timer = self.loop.call_later(delay, self._timed_out)

        def _cancel_timer(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

        def _timed_out(self) -> None:
            self._timer = None
            if self.transport.is_closing():
                return
            partial, _ = self.conn.trailing_data
            if self._awaiting == "headers" and partial:
                self.transport.write(too_slow)  # a started request deserves an answer
            log.debug("closed a connection from %s: no complete request %s within the limit",
                      self._peer, self._awaiting)
            # An app waiting for the body sees http.disconnect (logged as 499).
            self.transport.close()

    return GuardedH11Protocol


def server_config(app: Any, settings: Settings, *, workers: int = 1, **kwargs: Any
                  ) -> uvicorn.Config:
    """The uvicorn configuration `citadel serve` runs `app` with. With several `workers` the
    protocol is named by its import path (`citadel.server.workers`): the configuration is
    pickled to each spawned worker, and a class made by `guarded_protocol` cannot be."""
    http: Any = (guarded_protocol(ConnectionLimits.from_settings(settings)) if workers == 1
                 else "citadel.server.workers:GuardedH11Protocol")
    if workers > 1:
        from citadel.server.workers import HEALTHCHECK_TIMEOUT

        kwargs.setdefault("timeout_worker_healthcheck", HEALTHCHECK_TIMEOUT)
    return uvicorn.Config(
        app,
        http=http,
        workers=workers,
        # uvicorn annotates int but only hands it to loop.call_later: a float works.
        timeout_keep_alive=settings.http_keep_alive_timeout,  # type: ignore[arg-type]
        limit_concurrency=settings.http_max_connections,
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
        access_log=False,
        **kwargs,
    )
