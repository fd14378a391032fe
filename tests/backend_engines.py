"""Build an engine over the demo KB on each backend (hashing embedder: fast, deterministic)."""

from __future__ import annotations

from pathlib import Path

from citadel.backends import get_backend
from citadel.config import Settings
from citadel.embedders.hashing import HashingEmbedder
from citadel.engine import Engine
from citadel.ingest import ingest

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
