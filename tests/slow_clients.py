"""A slowloris attack from many loopback addresses, bounded in count and time, for the
connection-limit test and `benchmarks/slow_clients.py`.

Linux routes all of 127.0.0.0/8 to `lo`, so each source address is a different client to the
server's per-client cap: `addresses` x `per_address` sockets each trickle a request's headers
one byte at a time and never finish them, and each socket the server closes (a 408 after the
header timeout, a 503 when shed) is reopened at once, as a determined attacker would.
"""

from __future__ import annotations

import errno
import selectors
import socket
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Self

HEADERS = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Pad: "


@dataclass
class AttackCounts:
    opened: int = 0
    closed_by_server: int = 0  # with or without a response
    answers: Counter[str] = field(default_factory=Counter)  # status line -> count


def connecting_from(source: str, port: int) -> socket.socket | None:
    """A non-blocking socket from loopback address `source` connecting to 127.0.0.1:`port`,
    or None if the connection could not even start (the client's own limits)."""
    s = socket.socket()
    s.setblocking(False)
    try:
        s.bind((source, 0))
        code = s.connect_ex(("127.0.0.1", port))
    except OSError:
        s.close()
        return None
    if code not in (0, errno.EINPROGRESS):
        s.close()
        return None
    return s


class LoopbackAttack:
    """Runs the attack (`_run`, which returns once `_stop` is set) in a thread for as long
    as a `with` block lasts."""

    name = "attack"

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def _run(self) -> None:
        raise NotImplementedError


class SlowClients(LoopbackAttack):
    """`with SlowClients(port, 40, 50): ...` keeps 40 x 50 slow sockets pointed at `port`
    until the block ends."""

    name = "slow-clients"

    def __init__(self, port: int, addresses: int, per_address: int, *,
                 trickle_every: float = 0.5, first_address: int = 10) -> None:
        super().__init__()
        self.port = port
        self.sources = [f"127.0.{(first_address + i) // 250}.{(first_address + i) % 250 + 2}"
                        for i in range(addresses)]
        self.per_address = per_address
        self.trickle_every = trickle_every
        self.counts = AttackCounts()

    def _open(self, selector: selectors.BaseSelector, source: str) -> None:
        s = connecting_from(source, self.port)
        if s is None:
            return
        self.counts.opened += 1
        selector.register(s, selectors.EVENT_READ, [source, 0])  # [address, bytes sent]

    def _closed(self, selector: selectors.BaseSelector, s: socket.socket, source: str) -> None:
        selector.unregister(s)
        s.close()
        self.counts.closed_by_server += 1
        if not self._stop.is_set():
            self._open(selector, source)

    def _run(self) -> None:
        selector = selectors.DefaultSelector()
        for source in self.sources:
            for _ in range(self.per_address):
                self._open(selector, source)
        next_trickle = time.monotonic()
        try:
            while not self._stop.is_set():
                for key, _ in selector.select(timeout=0.05):
                    s, (source, _sent) = key.fileobj, key.data
                    try:
                        reply = s.recv(4096)  # type: ignore[union-attr]
                    except BlockingIOError:
                        continue
                    except OSError:
                        reply = b""
                    if reply:
                        self.counts.answers[reply.split(b"\r\n", 1)[0].decode()] += 1
                    self._closed(selector, s, source)  # type: ignore[arg-type]
                if time.monotonic() >= next_trickle:
                    next_trickle += self.trickle_every
                    for key in list(selector.get_map().values()):
                        source, sent = key.data
                        byte = HEADERS[sent:sent + 1] or b"a"  # the header never ends
                        try:
                            key.fileobj.send(byte)  # type: ignore[union-attr]
                            key.data[1] = sent + 1
                        except (BlockingIOError, InterruptedError):
                            pass  # still connecting: the next round sends it
                        except OSError:
                            self._closed(selector, key.fileobj, source)  # type: ignore[arg-type]
        finally:
            for key in list(selector.get_map().values()):
                key.fileobj.close()  # type: ignore[union-attr]
            selector.close()
