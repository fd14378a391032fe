"""The backend interface: every backend stores snapshots and answers with `RankedChunk`s."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np

from citadel.records import Chunk, Document, RankedChunk


class RetrievalError(RuntimeError):
    """The backend could not answer (server down, timeout, corrupt index)."""


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


class Backend(ABC):
    """Where snapshots live for one kind of engine."""

    name: str

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

    @abstractmethod
    def open(self, snapshot_id: str, dense_weight: float, candidates: int) -> SearchIndex: ...

    @abstractmethod
    def delete_snapshot(self, snapshot_id: str) -> None: ...

    @abstractmethod
    def has_snapshot(self, snapshot_id: str) -> bool: ...
