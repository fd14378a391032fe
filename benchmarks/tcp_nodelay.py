"""Why `citadel serve` makes its own listening socket: keep-alive latency with uvicorn's
default socket (proto 0: asyncio on Python 3.11 leaves Nagle on) vs `listening_socket`.

    .venv/bin/python benchmarks/tcp_nodelay.py

Sequential GET /healthz on one keep-alive connection against the Citadel app (no knowledge
base needed for /healthz), 50 requests per socket kind; prints p50 latency.
"""

from __future__ import annotations

import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import uvicorn

from citadel.config import Settings
from citadel.server import create_app
from citadel.server.listen import listening_socket


def plain_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # proto 0, like uvicorn's
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


def keepalive_p50(sock: socket.socket, requests: int = 50) -> float:
    app = create_app(Settings(home=Path(tempfile.mkdtemp()), embedder="hashing"))
    server = uvicorn.Server(uvicorn.Config(app, log_level="error", access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    client = socket.create_connection(sock.getsockname()[:2])
    client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    times = []
    for _ in range(requests):
        t0 = time.perf_counter()
        client.sendall(b"GET /healthz HTTP/1.1\r\nHost: bench\r\n\r\n")
        data = b""
        while not data.endswith(b'{"status":"ok"}'):
            data += client.recv(65536)
        times.append((time.perf_counter() - t0) * 1000)
    client.close()
    server.should_exit = True
    thread.join(timeout=30)
    sock.close()
    return statistics.median(times)


if __name__ == "__main__":
    plain = keepalive_p50(plain_socket())
    ours = keepalive_p50(listening_socket("127.0.0.1", 0))
    print(f"Python {sys.version.split()[0]}: keep-alive GET /healthz p50 "
          f"{plain:.2f} ms with a proto-0 socket, {ours:.2f} ms with listening_socket()")
