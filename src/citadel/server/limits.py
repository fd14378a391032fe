"""Connection limits for `citadel serve`: idle, slow and greedy clients cannot starve others.

uvicorn (0.55, h11) arms its keep-alive timer only after a response, and any byte cancels it:
a socket that never sends, or sends its headers one byte a second (slowloris), stays open
forever, and a few clients holding thousands of them exhaust the process's file descriptors
so `/healthz` stops answering. `guarded_protocol` is uvicorn's h11 protocol plus

* a header timeout: a request's headers must arrive within `http_header_timeout` seconds of
  the connection opening (or of the previous response), however slowly they trickle;
* a body timeout: its body within `http_body_timeout` seconds of its headers;
* a cap on open connections per client IP: more are answered 503 and closed at once;
* a cap on open connections in all (`http_max_connections`). A full server first sheds a
  connection that has not completed a request's headers (idle, or trickling them) and admits
  the newcomer: the oldest of the address with the most such connections, so one that
  holds many gives them up before a client that holds one. Without this, many addresses each
  under the per-client cap (40 x 50 slow sockets, reconnecting after each 408) hold every
  slot and a legitimate request meets 503 for as long as the attack lasts: shedding hands an
  idler's slot to whoever arrives, and a client that sends its request at once is past its
  headers, no longer sheddable, within a round trip. When every open connection has a
  request in hand, the longest-running request of the address holding the most connections
  is shed instead, if that address holds at least two more than the newcomer's: a response
  that lasts (a stream, `citadel.server.stream_limits`) counts against the client holding
  it. A client never takes a slot from one holding fewer; otherwise the newcomer is refused
  (503);
* a JSON body for the 400 that h11 raises on a request that is not valid HTTP (a negative
  `Content-Length`, a malformed header), like every other error of the API;
* a 431 (JSON) for a request line and headers over `MAX_HEADER_BYTES`, however they arrive
  (`HeaderLimitedConnection`);
* the start of a graceful shutdown passed on to the app (`citadel.server.drain`).

`citadel.server.uvicorn_config` runs this protocol with uvicorn's keep-alive timeout.
uvicorn's own `limit_concurrency` is left off: it counts connections that are already
closing, so a request on the slot freed by shedding would still meet its 503; the table here
bounds connections, and with them requests (h11 serves one request per connection at a
time).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import json
import logging
from dataclasses import dataclass
from typing import Any, Protocol

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from citadel.config import Settings
from citadel.server.drain import DRAIN_STATE

log = logging.getLogger("citadel.http.limits")

# Request line plus headers; more is refused with 431 (`HeaderLimitedConnection`).
MAX_HEADER_BYTES = 16 * 1024


@dataclass(frozen=True)
class ConnectionLimits:
    header_timeout: float
    body_timeout: float
    max_per_client: int  # 0: no cap
    max_connections: int = 1000

    @classmethod
    def from_settings(cls, settings: Settings) -> ConnectionLimits:
        return cls(header_timeout=settings.http_header_timeout,
                   body_timeout=settings.http_body_timeout,
                   max_per_client=settings.http_max_connections_per_client,
                   max_connections=settings.http_max_connections)


class Sheddable(Protocol):
    def shed(self) -> None: ...


class ConnectionTable:
    """The open connections of one server: how many per client address, which are waiting
    for a request's headers, and in which order the others got one in hand. A full server
    sheds, first, the oldest waiting connection of the address with the most, if that
    address holds more connections than the newcomer's; else the longest-running request of
    the address holding the most connections, if that address holds at least two more than
    the newcomer's. So a client never takes a slot from one holding fewer, long-lived
    responses count against the client that holds them, and a client holding many
    connections cannot keep out one that holds none; a server full of clients holding one
    busy connection each refuses the newcomer. All of a server's protocol instances run on
    its event loop thread, so no lock is needed."""

    def __init__(self, per_client: int, total: int) -> None:
        self.per_client = per_client
        self.total = total
        self.open = 0
        self._by_address: dict[str, int] = {}
        # Address -> its waiting connections, insertion-ordered: the first has waited longest.
        self._waiting: dict[str, dict[Sheddable, None]] = {}
        self._address_of: dict[Sheddable, str] = {}
        # (-waiting, stamp, address): a heap whose top is the address with the most waiting
        # connections (of equals, the one whose count changed first). An entry is current
        # while its stamp is the address's latest; stale ones are skipped when they surface.
        self._heaviest: list[tuple[int, int, str]] = []
        self._stamp: dict[str, int] = {}
        self._stamps = itertools.count()
        # Address -> its connections with a request in hand, the longest-running first.
        self._busy: dict[str, dict[Sheddable, None]] = {}
        self._busy_address: dict[Sheddable, str] = {}

    def count(self, address: str) -> int:
        return self._by_address.get(address, 0)

    def admit(self, address: str) -> str | None:
        """Count a new connection from `address`, shedding one if the server is full (see the
        class); or say why not: "client" (its address is at the cap) or "full" (every open
        connection has a request in hand, and no address holds two more than this one)."""
        if self.per_client and self.count(address) >= self.per_client:
            return "client"
        if self.open >= self.total:
            victim = self._victim(address) or self._longest_running(address)
            if victim is None:
                return "full"
            # Its slot is free from now, not from whenever its socket finishes closing.
            self.release(self._address_of.get(victim) or self._busy_address[victim])
            self.waiting(victim, None)
            self.busy(victim, None)
            victim.shed()
        self._by_address[address] = self.count(address) + 1
        self.open += 1
        return None

    def release(self, address: str) -> None:
        self.open -= 1
        count = self.count(address) - 1
        if count > 0:
            self._by_address[address] = count
        else:
            self._by_address.pop(address, None)

    def waiting(self, connection: Sheddable, address: str | None) -> None:
        """Mark `connection` (from `address`) as waiting for headers, from now: to the back
        of its address's line; or, with None, as not (it has a request in hand, or is gone)."""
        before = self._address_of.pop(connection, None)
        if before is not None:
            line = self._waiting[before]
            del line[connection]
            if not line:
                del self._waiting[before], self._stamp[before]
            else:
                self._rank(before)
        if address is not None:
            self._address_of[connection] = address
            self._waiting.setdefault(address, {})[connection] = None
            self._rank(address)

    def busy(self, connection: Sheddable, address: str | None) -> None:
        """Mark `connection` (from `address`) as having a request in hand, from now; or, with
        None, as not (its response is complete, or it is gone)."""
        before = self._busy_address.pop(connection, None)
        if before is not None:
            requests = self._busy[before]
            del requests[connection]
            if not requests:
                del self._busy[before]
        if address is not None:
            self._busy_address[connection] = address
            self._busy.setdefault(address, {})[connection] = None

    def _rank(self, address: str) -> None:
        stamp = self._stamp[address] = next(self._stamps)
        heapq.heappush(self._heaviest, (-len(self._waiting[address]), stamp, address))
        if len(self._heaviest) > 4 * len(self._stamp) + 64:  # mostly stale: rebuild
            self._heaviest = [(-len(self._waiting[a]), t, a) for a, t in self._stamp.items()]
            heapq.heapify(self._heaviest)

    def _victim(self, newcomer: str) -> Sheddable | None:
        """The oldest waiting connection of the address with the most, if any waits and
        that address holds at least as many connections as `newcomer`'s will."""
        while self._heaviest:
            _, stamp, address = self._heaviest[0]
            if self._stamp.get(address) == stamp:
                if self.count(address) <= self.count(newcomer):
                    return None  # a client never takes a slot from one holding fewer
                return next(iter(self._waiting[address]))
            heapq.heappop(self._heaviest)
        return None

    def _longest_running(self, newcomer: str) -> Sheddable | None:
        """The longest-running request of the address holding the most connections, if it
        holds at least two more than `newcomer`'s. Runs only when the server is full and
        nothing waits: a scan of the addresses."""
        heaviest = max(self._busy, key=self.count, default=None)
        if heaviest is None or self.count(heaviest) < self.count(newcomer) + 2:
            return None
        return next(iter(self._busy[heaviest]))


def head_size(request: h11.Request) -> int:
    """The bytes of a request's head as sent: request line, header lines, blank line."""
    line = len(request.method) + len(request.target) + len(request.http_version) + 9
    return line + sum(len(name) + len(value) + 4 for name, value in request.headers) + 2


class HeaderLimitedConnection(h11.Connection):
    """h11's server connection, holding every request's head to `max_header_bytes`.

    h11 bounds only what it buffers while a head is incomplete: a head that arrives in one
    read, or completes in the read that crosses the bound, passes at any size (100,000 bytes
    in one header got 200). Each complete head is measured here too. A refusal is an h11
    protocol error with status hint 431, which `status_hint` keeps for the response."""

    def __init__(self, max_header_bytes: int) -> None:
        super().__init__(h11.SERVER, max_incomplete_event_size=max_header_bytes)
        self.max_header_bytes = max_header_bytes
        self.status_hint: int | None = None  # of the last protocol error

    def next_event(self) -> Any:
        try:
            event = super().next_event()
        except h11.RemoteProtocolError as exc:
            self.status_hint = exc.error_status_hint
            raise
        if isinstance(event, h11.Request) and head_size(event) > self.max_header_bytes:
            self.status_hint = 431
            raise h11.RemoteProtocolError("request headers too large", error_status_hint=431)
        return event


def _raw_response(status: int, reason: str, message: str, code: str,
                  extra: tuple[str, ...] = ()) -> bytes:
    """A complete HTTP/1.1 error response, for moments when h11 has no request to answer."""
    body = json.dumps({"error": {"code": code, "message": message, "errors": [],
                                 "request_id": None}}).encode()
    head = [f"HTTP/1.1 {status} {reason}", "content-type: application/json",
            f"content-length: {len(body)}", "connection: close", *extra]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def guarded_protocol(limits: ConnectionLimits) -> type[H11Protocol]:
    """uvicorn's h11 protocol with header/body read timeouts, a per-client and a total cap
    on connections; each call makes a class with its own connection table (one per server)."""
    table = ConnectionTable(limits.max_per_client, limits.max_connections)
    too_many = _raw_response(
        503, "Service Unavailable",
        f"too many open connections from your address (at most {limits.max_per_client}): "
        "reuse or close connections, then retry", "too_many_connections", ("retry-after: 1",))
    full = _raw_response(
        503, "Service Unavailable",
        f"the server is at its limit of {limits.max_connections} open connections, all of "
        "them with a request in progress: retry shortly", "server_busy", ("retry-after: 1",))
    shed = _raw_response(
        503, "Service Unavailable",
        "the server is at its connection limit and closed this connection, which had not "
        "sent a complete request: send the whole request at once", "connection_shed",
        ("retry-after: 1",))
    invalid_http = _raw_response(
        400, "Bad Request",
        "the request is not valid HTTP/1.1 (a malformed request line, header or "
        "Content-Length, such as a negative one): fix the request and send it again",
        "invalid_http")
    headers_too_large = _raw_response(
        431, "Request Header Fields Too Large",
        f"the request line and headers are larger than {MAX_HEADER_BYTES} bytes: send "
        "smaller headers", "headers_too_large")
    too_slow = _raw_response(
        408, "Request Timeout",
        f"the request's headers did not arrive within {limits.header_timeout:g} s: send the "
        "whole request at once", "request_timeout")

    class GuardedH11Protocol(H11Protocol):
        connection_limits = limits

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.conn = HeaderLimitedConnection(MAX_HEADER_BYTES)
            self._peer: str | None = None  # counted in `clients` while set
            self._refused = False
            self._timer: asyncio.TimerHandle | None = None
            self._awaiting: str | None = None  # "headers" | "body" | None (request read)

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            peer = self.client[0] if self.client else "unknown"
            refusal = table.admit(peer)
            if refusal is not None:
                self._refused = True
                if refusal == "client":
                    log.warning("refused a connection from %s: it already has %d open", peer,
                                table.count(peer))
                else:
                    log.warning("refused a connection from %s: all %d open connections have "
                                "a request in progress", peer, table.total)
                transport.write(too_many if refusal == "client" else full)
                transport.close()
                return
            self._peer = peer
            self._expect("headers")

        def connection_lost(self, exc: Exception | None) -> None:
            self._forget()
            super().connection_lost(exc)

        def shed(self) -> None:
            """Closed to make room for a newcomer; `ConnectionTable.admit` has released its
            slot already."""
            partial, _ = self.conn.trailing_data
            self._cancel_timer()
            self._refused = True  # whatever it sends now is ignored
            if self._awaiting != "headers":  # a long-lived request: cut, as if its client left
                log.info("shed a connection from %s whose request had run the longest: "
                         "the server was full", self._peer)
                fields = self.scope.get("state", {}).get("log") if self.scope else None
                if isinstance(fields, dict):
                    fields["shed"] = True  # the request's log line says so
                self.transport.abort()
            elif partial:
                log.debug("shed a connection from %s sending its headers", self._peer)
                self.transport.write(shed)  # a started request deserves an answer
                self.transport.close()
            else:
                # Idle: nothing to say. abort() rather than close(): a peer that does not
                # read cannot hold the socket open behind a pending write.
                self.transport.abort()
            self._peer = None

        def _forget(self) -> None:
            self._cancel_timer()
            table.waiting(self, None)
            table.busy(self, None)
            if self._peer is not None:
                table.release(self._peer)
                self._peer = None

        def send_400_response(self, msg: str) -> None:
            # h11 found a request that is not valid HTTP/1.1 (uvicorn would answer in plain
            # text): the API's JSON error body, as for every other 400; 431 for a head
            # over the limit.
            self.logger.warning(msg)
            too_large = self.conn.status_hint == 431  # type: ignore[attr-defined]
            self.transport.write(headers_too_large if too_large else invalid_http)
            self.transport.close()

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
                table.waiting(self, None)  # its slot frees itself as it closes
                table.busy(self, None)
            elif self.conn.their_state is h11.IDLE:
                self._expect("headers")
            elif self.conn.their_state is h11.SEND_BODY:
                self._expect("body")
            else:  # the request has been read (or the connection is ending)
                self._cancel_timer()
                if self._awaiting == "headers":  # the whole request in one go: busy from now
                    table.waiting(self, None)
                    table.busy(self, self._peer)
                self._awaiting = None

        def _expect(self, part: str) -> None:
            if self._awaiting == part and self._timer is not None:
                return  # already timing it: trickling bytes do not extend the deadline
            self._cancel_timer()
            if part == "headers":
                table.busy(self, None)
            elif self._awaiting == "headers":  # headers in hand: busy from now
                table.busy(self, self._peer)
            self._awaiting = part
            table.waiting(self, self._peer if part == "headers" else None)
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
