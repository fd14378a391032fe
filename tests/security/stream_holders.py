"""Clients that hold long-lived responses open, from many loopback addresses, bounded in count
and time: for the stream-starvation test and `benchmarks/stream_holders.py`.

Each of `addresses` x `per_address` sockets sends one whole request that asks for a
long-lived response (`GET /mcp`, which opened an event stream that never ended; an answer
stream; a chat stream), with `Connection: close`, and reads whatever comes. When the server
closes the socket (the response ended, or was refused) it is reopened after `pause` seconds
with the next kind of request, as long as the attack lasts. Linux routes all of 127.0.0.0/8
to `lo`, so each address is a different client to the server's per-client caps.
"""

from __future__ import annotations

import json
import selectors
import socket
import time
from collections import Counter
from dataclasses import dataclass, field

from tests.slow_clients import LoopbackAttack, connecting_from

QUESTION = "How long are gift cards valid?"


def _post(path: str, body: dict) -> bytes:
    data = json.dumps(body).encode()
    return (f"POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            f"Accept: text/event-stream\r\nConnection: close\r\n"
            f"Content-Length: {len(data)}\r\n\r\n").encode() + data


REQUESTS = {
    "mcp": b"GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n"
           b"Connection: close\r\n\r\n",
    "answer": _post("/v1/answer/stream", {"question": QUESTION}),
    "chat": _post("/v1/chat/completions", {"model": "citadel", "stream": True,
                                           "messages": [{"role": "user",
                                                         "content": QUESTION}]}),
}


@dataclass
class HolderCounts:
    opened: int = 0
    answers: Counter[str] = field(default_factory=Counter)  # "kind status" -> count
    holding: int = 0  # sockets whose response has started with 200 and not ended
    most_held: int = 0


@dataclass
class _Socket:
    source: str
    kind: str
    sent: bool = False
    status: str | None = None


class StreamHolders(LoopbackAttack):
    """`with StreamHolders(port, 16, 4): ...` keeps 16 x 4 sockets asking for long-lived
    responses from `port` until the block ends."""

    name = "stream-holders"

    def __init__(self, port: int, addresses: int, per_address: int, *,
                 kinds: tuple[str, ...] = ("mcp", "answer", "chat"), pause: float = 0.2,
                 first_address: int = 2) -> None:
        super().__init__()
        self.port = port
        self.sources = [f"127.0.0.{first_address + i}" for i in range(addresses)]
        self.per_address = per_address
        self.kinds = kinds
        self.pause = pause
        self.counts = HolderCounts()
        self._turn = 0

    def _open(self, selector: selectors.BaseSelector, source: str) -> None:
        s = connecting_from(source, self.port)
        if s is None:
            return
        self.counts.opened += 1
        kind = self.kinds[self._turn % len(self.kinds)]
        self._turn += 1
        selector.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE, _Socket(source, kind))

    def _ended(self, selector: selectors.BaseSelector, s: socket.socket, state: _Socket,
               reopen: list[tuple[float, str]]) -> None:
        selector.unregister(s)
        s.close()
        if state.status == "200":
            self.counts.holding -= 1
        reopen.append((time.monotonic() + self.pause, state.source))

    def _run(self) -> None:
        selector = selectors.DefaultSelector()
        reopen: list[tuple[float, str]] = []
        for source in self.sources:
            for _ in range(self.per_address):
                self._open(selector, source)
        try:
            while not self._stop.is_set():
                for key, events in selector.select(timeout=0.05):
                    s, state = key.fileobj, key.data
                    assert isinstance(s, socket.socket)
                    if events & selectors.EVENT_WRITE and not state.sent:
                        try:
                            s.sendall(REQUESTS[state.kind])  # small: the buffer takes it
                        except (BlockingIOError, InterruptedError):
                            continue
                        except OSError:
                            self._ended(selector, s, state, reopen)
                            continue
                        state.sent = True
                        selector.modify(s, selectors.EVENT_READ, state)
                        continue
                    try:
                        data = s.recv(65536)
                    except (BlockingIOError, InterruptedError):
                        continue
                    except OSError:
                        data = b""
                    if data and state.status is None and data.startswith(b"HTTP/1.1 "):
                        state.status = data[9:12].decode()
                        self.counts.answers[f"{state.kind} {state.status}"] += 1
                        if state.status == "200":
                            self.counts.holding += 1
                            self.counts.most_held = max(self.counts.most_held,
                                                        self.counts.holding)
                    if not data:
                        self._ended(selector, s, state, reopen)
                now = time.monotonic()
                due = [source for at, source in reopen if at <= now]
                reopen = [(at, source) for at, source in reopen if at > now]
                for source in due:
                    self._open(selector, source)
        finally:
            for key in list(selector.get_map().values()):
                key.fileobj.close()  # type: ignore[union-attr]
            selector.close()
