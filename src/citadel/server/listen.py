"""The listening socket for `citadel serve`.

asyncio (Python 3.11) turns on TCP_NODELAY only for sockets whose `proto` is IPPROTO_TCP, and
uvicorn creates its listening socket with proto 0, so accepted connections keep Nagle's
algorithm: a response written in two parts (headers, then body) waits for the client's
delayed ACK, about 40 ms on every keep-alive request. A socket made with IPPROTO_TCP passes
that on to every connection it accepts.
"""

from __future__ import annotations

import socket


def listening_socket(host: str, port: int) -> socket.socket:
    """A bound TCP socket for `host:port` (uvicorn/asyncio call `listen` on it)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP,
                               flags=socket.AI_PASSIVE)
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto or socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError:
        sock.close()
        raise
    return sock
