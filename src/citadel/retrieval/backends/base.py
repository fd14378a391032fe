"""The backend interface: every backend stores snapshots and answers with `RankedChunk`s."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from citadel.records import Chunk, Document, RankedChunk


class RetrievalError(RuntimeError):
    """The backend could not answer (server down, timeout, corrupt index)."""


@dataclass(frozen=True)
class SearchResult:
    """One request's retrieval: the ranked chunks plus what was dropped on the way.

    `malformed_skipped` counts stored points/rows whose payload could not be read as a
    `Chunk` (missing or wrongly typed fields); they never become chunks, so never citations.
    """

    ranked: list[RankedChunk]
    malformed_skipped: int = 0


class SearchIndex(ABC):
    """One complete snapshot, opened for reading. Safe to share between threads."""

    backend: str
    strategy: str
    snapshot_id: str

    @abstractmethod
    def search(
        self,
        text: str,
        vector: np.ndarray,
        k: int,
        *,
        tenant: str | None = None,
        category: str | None = None,
    ) -> list[RankedChunk]:
        """Top-k chunks for a query, best first, rank 1..k. Raises RetrievalError."""

    def search_result(
        self,
        text: str,
        vector: np.ndarray,
        k: int,
        *,
        tenant: str | None = None,
        category: str | None = None,
    ) -> SearchResult:
        """`search` plus per-request counts; backends that can meet malformed data override."""
        return SearchResult(self.search(text, vector, k, tenant=tenant, category=category))

    @abstractmethod
    def get_chunk(self, chunk_id: str) -> Chunk | None: ...

    @abstractmethod
    def get_document(self, document_id: str) -> Document | None: ...

    @abstractmethod
    def chunks_of(self, document_id: str) -> list[Chunk]: ...

    @abstractmethod
    def count(self) -> dict[str, int]:
        """{"documents": n, "chunks": n, "dense": n, "lexical": n} for validation."""

    def close(self) -> None:  # noqa: B027 - optional hook
        pass


class CountingSearchIndex(SearchIndex):
    """An index whose native query is `search_result`: it reads stored payloads that may be
    malformed and counts the ones it skips; `search` is the same query without the count."""

    def search(
        self,
        text: str,
        vector: np.ndarray,
        k: int,
        *,
        tenant: str | None = None,
        category: str | None = None,
    ) -> list[RankedChunk]:
        return self.search_result(text, vector, k, tenant=tenant, category=category).ranked

    @abstractmethod
    def search_result(
        self,
        text: str,
        vector: np.ndarray,
        k: int,
        *,
        tenant: str | None = None,
        category: str | None = None,
    ) -> SearchResult: ...


class Backend(ABC):
    """Where snapshots live for one kind of engine.

    The catalog (SQLite under CITADEL_HOME) stays the record of snapshot states and of the
    alias; a backend whose engine has an alias of its own (Qdrant collection alias, PostgreSQL
    pointer row) mirrors it in `activate`, and `engine_alias` reads it back for readiness.
    """

    name: str
    #: True when the engine keeps an alias of its own that `activate` mirrors.
    mirrors_alias: bool = False
    #: Lexical-index semantics, part of the snapshot fingerprint (ranking differs per engine).
    lexical_semantics: dict[str, Any]

    @abstractmethod
    def write_snapshot(
        self,
        snapshot_id: str,
        documents: Sequence[Document],
        chunks: Sequence[Chunk],
        vectors: np.ndarray,
        index_texts: Sequence[str],
    ) -> None:
        """Write a whole snapshot. Never touches another snapshot's data."""

    def dense_index(self, chunks: int) -> dict[str, Any] | None:
        """The approximate dense index a snapshot of `chunks` chunks gets (its parameters,
        for the fingerprint), or None for exact search only."""
        return None

    @abstractmethod
    def open(self, snapshot_id: str, dense_weight: float, candidates: int) -> SearchIndex: ...

    @abstractmethod
    def delete_snapshot(self, snapshot_id: str) -> None: ...

    @abstractmethod
    def has_snapshot(self, snapshot_id: str) -> bool: ...

    def check_snapshot(self, snapshot_id: str, chunks: int) -> str | None:
        """Why the snapshot's data cannot be served (cheap structural checks: files open,
        counts agree with the `chunks` the catalog recorded), or None. Readiness calls it
        before a snapshot is served; the default trusts the engine."""
        return None

    def activate(self, snapshot_id: str) -> None:  # noqa: B027 - optional hook
        """Point the engine's own alias at a snapshot in one atomic step (catalog switch)."""

    def engine_alias(self) -> str | None:
        """The snapshot the engine's own alias points at; None when it keeps none."""
        return None

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections once every index opened from this backend is closed."""
