"""Backends: `local` (embedded default), `qdrant`, `postgres`; chosen by CITADEL_BACKEND."""

from __future__ import annotations

from citadel.config import ConfigError, Settings
from citadel.retrieval.backends.base import Backend, RetrievalError, SearchIndex, SearchResult

BACKENDS = ("local", "qdrant", "postgres")


def get_backend(settings: Settings) -> Backend:
    if settings.backend == "local":
        from citadel.retrieval.ann import AnnParams
        from citadel.retrieval.backends.local import LocalBackend

        return LocalBackend(settings.home / "snapshots",
                            ann_min_chunks=settings.ann_min_chunks or None,
                            ann_params=AnnParams(settings.ann_m, settings.ann_ef_construction),
                            ann_ef_search=settings.ann_ef_search)
    if settings.backend == "qdrant":
        from citadel.retrieval.backends.qdrant import QdrantBackend

        if settings.qdrant_url:
            return QdrantBackend(url=settings.qdrant_url, alias=settings.qdrant_alias,
                                 timeout=settings.backend_timeout)
        return QdrantBackend(path=settings.qdrant_path or settings.home / "qdrant",
                             alias=settings.qdrant_alias, timeout=settings.backend_timeout)
    if settings.backend == "postgres":
        from citadel.retrieval.backends.postgres import PostgresBackend

        if not settings.postgres_dsn:
            raise ConfigError("the postgres backend needs CITADEL_POSTGRES_DSN (postgres_dsn)")
        return PostgresBackend(settings.postgres_dsn, timeout=settings.backend_timeout)
    raise ConfigError(
        f"unknown backend {settings.backend!r}: choose one of {', '.join(BACKENDS)}"
    )


def lexical_semantics(settings: Settings) -> dict:
    """The configured backend's lexical-index semantics, without connecting to it."""
    if settings.backend == "qdrant":
        from citadel.retrieval.sparse import SEMANTICS
    elif settings.backend == "postgres":
        from citadel.retrieval.backends.postgres import SEMANTICS
    else:
        from citadel.retrieval.lexical import SEMANTICS
    return SEMANTICS


__all__ = ["BACKENDS", "Backend", "RetrievalError", "SearchIndex", "SearchResult",
           "get_backend", "lexical_semantics"]
