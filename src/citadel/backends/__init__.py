"""Backends: `local` (embedded default); others are selected with CITADEL_BACKEND."""

from __future__ import annotations

from citadel.backends.base import Backend, RetrievalError, SearchIndex
from citadel.config import ConfigError, Settings


def get_backend(settings: Settings) -> Backend:
    if settings.backend == "local":
        from citadel.backends.local import LocalBackend

        return LocalBackend(settings.home / "snapshots")
    raise ConfigError(f"unknown backend {settings.backend!r}: choose 'local'")


__all__ = ["Backend", "RetrievalError", "SearchIndex", "get_backend"]
