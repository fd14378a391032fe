"""Build an engine over the demo KB on each backend (hashing embedder: fast, deterministic)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from citadel.config import Settings
from citadel.engine import Engine
from citadel.ingest.pipeline import ingest
from citadel.retrieval.backends import get_backend
from citadel.retrieval.embedders.hashing import HashingEmbedder

BACKENDS = ("local", "qdrant-memory", "qdrant-path", "postgres")


def backend_settings(name: str, home: Path, postgres_dsn: str | None = None, **extra) -> Settings:
    if name == "local":
        return Settings(home=home, embedder="hashing", **extra)
    if name == "qdrant-memory":
        return Settings(home=home, embedder="hashing", backend="qdrant", qdrant_path=":memory:",
                        **extra)
    if name == "qdrant-path":  # the default folder, <home>/qdrant
        return Settings(home=home, embedder="hashing", backend="qdrant", **extra)
    if name == "postgres":
        return Settings(home=home, embedder="hashing", backend="postgres",
                        postgres_dsn=postgres_dsn, **extra)
    raise ValueError(name)


def build_engine(settings: Settings, paths: list[Path]) -> Engine:
    """Ingest then open, through one backend object (an in-memory Qdrant lives in it)."""
    backend = get_backend(settings)
    ingest(paths, settings, embedder=HashingEmbedder(), backend=backend, progress=False)
    engine = Engine.open(settings, embedder=HashingEmbedder(), backend=backend)
    backend.close()  # effective once the engine's index closes
    return engine


@contextmanager
def silent_server() -> Iterator[int]:
    """A TCP port that accepts connections and never says a word: a hung server."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    sock.settimeout(0.2)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept_and_ignore() -> None:
        while not stop.is_set():
            try:
                accepted.append(sock.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept_and_ignore, daemon=True)
    thread.start()
    try:
        yield sock.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        for conn in accepted:
            conn.close()
        sock.close()
