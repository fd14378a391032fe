"""The embedded default: SQLite for chunks and documents, an exact float32 matrix for dense
search in numpy (with a faiss HNSW graph in front of it for large snapshots, `retrieval.ann`),
tantivy for BM25, weighted score fusion. One directory per snapshot."""

from __future__ import annotations

import logging
import os
import shutil
import sqlite3
import threading
import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from citadel.records import Chunk, Document, RankedChunk
from citadel.retrieval import ann
from citadel.retrieval.backends.base import Backend, RetrievalError, SearchIndex
from citadel.retrieval.backends.local_check import check_files
from citadel.retrieval.fusion import weighted_fusion
from citadel.retrieval.lexical import NOT_RETRIEVABLE, SEMANTICS, LexicalIndex, build_index

_SCHEMA = """
CREATE TABLE documents (document_id TEXT PRIMARY KEY, json TEXT NOT NULL);
CREATE TABLE chunks (row INTEGER PRIMARY KEY, chunk_id TEXT UNIQUE NOT NULL,
                     document_id TEXT NOT NULL, tenant TEXT, category TEXT, json TEXT NOT NULL,
                     retrievable INTEGER NOT NULL);
CREATE INDEX chunks_document ON chunks(document_id);
"""


log = logging.getLogger(__name__)

# Below this many rows left by a filter, an exact scan of those rows is cheaper and exact,
# and HNSW's filtered walk loses recall.
ANN_MIN_FILTERED = 20_000
# From this many rows on, the dense and lexical legs of a search run in parallel.
PARALLEL_MIN_ROWS = 10_000


def _top(scores: np.ndarray, n: int, rows: np.ndarray | None = None) -> dict[int, float]:
    """The `n` best scores by row (`rows[i]` is the row of `scores[i]`; None: i itself)."""
    n = min(n, len(scores))
    if n == 0:
        return {}
    top = np.argpartition(-scores, n - 1)[:n]
    return {int(i if rows is None else rows[i]): float(scores[i]) for i in top}


class LocalBackend(Backend):
    name = "local"
    lexical_semantics = SEMANTICS

    def __init__(self, root: Path, *, ann_min_chunks: int | None = None,
                 ann_params: ann.AnnParams | None = None, ann_ef_search: int | None = None
                 ) -> None:
        self.root = root
        self.ann_min_chunks = ann_min_chunks  # None: never build an ANN graph
        self.ann_params = ann_params or ann.AnnParams()
        self.ann_ef_search = ann_ef_search

    def dense_index(self, chunks: int) -> dict | None:
        if self.ann_min_chunks is None or chunks < self.ann_min_chunks:
            return None
        if not ann.available():
            log.warning("%d chunks: %s; searching exactly", chunks, ann.INSTALL_HINT)
            return None
        return self.ann_params.fingerprint()

    def path(self, snapshot_id: str) -> Path:
        return self.root / snapshot_id

    def has_snapshot(self, snapshot_id: str) -> bool:
        return (self.path(snapshot_id) / "chunks.sqlite").is_file()

    def write_snapshot(
        self,
        snapshot_id: str,
        documents: Sequence[Document],
        chunks: Sequence[Chunk],
        vectors: np.ndarray,
        index_texts: Sequence[str],
    ) -> None:
        if len(chunks) != len(vectors) or len(chunks) != len(index_texts):
            raise ValueError("chunks, vectors and index texts differ in length")
        self.root.mkdir(parents=True, exist_ok=True)
        # Build in a private directory, then rename: a reader never sees a partial snapshot.
        staging = self.root / f".{snapshot_id}.{uuid.uuid4().hex[:8]}.tmp"
        staging.mkdir()
        try:
            conn = sqlite3.connect(staging / "chunks.sqlite")
            with conn:
                conn.executescript(_SCHEMA)
                conn.executemany(
                    "INSERT INTO documents VALUES (?, ?)",
                    ((d.document_id, d.model_dump_json()) for d in documents),
                )
                conn.executemany(
                    "INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        (i, c.chunk_id, c.document_id, c.tenant, c.category, c.model_dump_json(),
                         int(c.retrievable))
                        for i, c in enumerate(chunks)
                    ),
                )
            conn.close()
            np.save(staging / "dense.npy", np.ascontiguousarray(vectors, dtype=np.float32))
            if self.dense_index(len(chunks)) is not None:
                ann.build(vectors, self.ann_params, staging / ann.FILE)
            build_index(
                staging / "lexical",
                ((i, t, c.tenant if c.retrievable else NOT_RETRIEVABLE, c.category)
                 for i, (c, t) in enumerate(zip(chunks, index_texts, strict=True))),
            )
            final = self.path(snapshot_id)
            if final.exists():
                shutil.rmtree(final)  # an earlier failed build of the same id; never active
            staging.rename(final)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise

    def check_snapshot(self, snapshot_id: str, chunks: int) -> str | None:
        return check_files(self.path(snapshot_id), chunks)

    def delete_snapshot(self, snapshot_id: str) -> None:
        shutil.rmtree(self.path(snapshot_id), ignore_errors=True)

    def open(self, snapshot_id: str, dense_weight: float, candidates: int) -> LocalIndex:
        return LocalIndex(self.path(snapshot_id), snapshot_id, dense_weight, candidates,
                          ann_ef_search=self.ann_ef_search)


class LocalIndex(SearchIndex):
    backend = "local"
    strategy = "hybrid-weighted(numpy-exact+tantivy-bm25)"

    def __init__(self, path: Path, snapshot_id: str, dense_weight: float, candidates: int,
                 *, ann_ef_search: int | None = None):
        if not (path / "chunks.sqlite").is_file():
            raise RetrievalError(f"snapshot data missing at {path}")
        self.snapshot_id = snapshot_id
        self.dense_weight = dense_weight
        self.candidates = candidates
        self._conn = sqlite3.connect(
            f"file:{path / 'chunks.sqlite'}?mode=ro", uri=True, check_same_thread=False
        )
        self._lock = threading.Lock()
        self._ann: ann.AnnIndex | None = None
        if (path / ann.FILE).is_file():
            try:
                self._ann = ann.AnnIndex(path / ann.FILE, ann_ef_search)
            except ann.AnnUnavailable as exc:
                raise RetrievalError(f"snapshot {snapshot_id} has an ANN index: {exc}") from None
            self.strategy = "hybrid-weighted(faiss-hnsw+exact-rescoring+tantivy-bm25)"
        # With a graph in front, only rescored rows are read: map the matrix, don't load it.
        self._dense = np.load(path / "dense.npy", mmap_mode="r" if self._ann else None)
        self._lexical = LexicalIndex(path / "lexical")
        self._filter_columns: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._unfiltered = False  # every row public and retrievable
        # Large snapshots search their two legs at once (each takes milliseconds there);
        # for small ones a thread hand-off would cost more than it saves.
        self._legs = (ThreadPoolExecutor(max_workers=os.cpu_count() or 1,
                                         thread_name_prefix="citadel-lexical")
                      if len(self._dense) >= PARALLEL_MIN_ROWS else None)

    def _query(self, sql: str, params: Sequence[object] = ()) -> list[tuple]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def _mask(self, tenant: str | None, category: str | None) -> np.ndarray | None:
        """Rows the request may see (None: all of them). No tenant means public rows only;
        a chunk that is not retrievable (flagged, retired) is seen by nobody."""
        if self._filter_columns is None:
            rows = self._query("SELECT tenant, category, retrievable FROM chunks ORDER BY row")
            self._filter_columns = (
                np.array([r[0] or "" for r in rows], dtype=object),
                np.array([r[1] or "" for r in rows], dtype=object),
                np.array([bool(r[2]) for r in rows], dtype=bool),
            )
            self._unfiltered = (not any(self._filter_columns[0])
                                and bool(self._filter_columns[2].all()))
        if self._unfiltered and category is None:
            return None  # nothing private or excluded to hide, no category asked for
        tenants, categories, retrievable = self._filter_columns
        mask = tenants == ""
        if tenant:
            mask |= tenants == tenant
        if category is not None:
            mask &= categories == category
        return mask & retrievable

    def search(
        self,
        text: str,
        vector: np.ndarray,
        k: int,
        *,
        tenant: str | None = None,
        category: str | None = None,
    ) -> list[RankedChunk]:
        try:
            mask = self._mask(tenant, category)
            if self._legs is None:
                dense = self._dense_search(vector, mask)
                lexical = self._lexical.search(text, self.candidates, tenant, category)
            else:
                # Both engines release the GIL: the lexical leg runs beside the dense one.
                leg = self._legs.submit(self._lexical.search, text, self.candidates, tenant,
                                        category)
                dense = self._dense_search(vector, mask)
                lexical = leg.result()
        except (OSError, ValueError, sqlite3.Error) as exc:
            raise RetrievalError(f"local retrieval failed: {exc}") from exc
        if mask is not None:
            # The lexical index filters too, but by its own encoding of "public": the rows'
            # own tenant column decides, so both legs hide exactly the same rows.
            lexical = {row: score for row, score in lexical.items() if mask[row]}
        # Exact dense scores exist for every row: fill them in for lexical-only candidates.
        missing = [row for row in lexical if row not in dense]
        if missing:
            scores = np.einsum("ij,j->i", self._dense[missing], vector.astype(np.float32,
                                                                              copy=False))
            dense.update(zip(missing, map(float, scores), strict=True))
        fused = weighted_fusion(dense, lexical, self.dense_weight, k)
        chunks = self._chunks_by_row([f.row for f in fused])
        return [
            RankedChunk(
                chunk=chunks[f.row],
                retrieval_score=round(f.score, 6),
                dense_score=None if f.dense is None else round(f.dense, 6),
                lexical_score=None if f.lexical is None else round(f.lexical, 6),
                rank=rank,
            )
            for rank, f in enumerate(fused, start=1)
        ]

    def _dense_search(self, vector: np.ndarray, mask: np.ndarray | None) -> dict[int, float]:
        if len(self._dense) == 0:
            return {}
        vector = vector.astype(np.float32, copy=False)
        kept = len(self._dense) if mask is None else int(mask.sum())
        if self._ann is not None and kept >= ANN_MIN_FILTERED:
            # The graph proposes a wide pool; exact float32 scores decide within it.
            pool = max(self._ann.ef_search, 4 * self.candidates)
            rows = np.sort(self._ann.search(vector, pool, mask))
            return _top(np.einsum("ij,j->i", self._dense[rows], vector), self.candidates, rows)
        # Exact: the reference. A filter scans only its own rows.
        rows = None if mask is None else np.flatnonzero(mask)
        matrix = self._dense if rows is None else self._dense[rows]
        # einsum runs on the request's own thread; `@` would wake OpenBLAS's thread pool,
        # which for this memory-bound scan bought nothing on 2 shared cores and its
        # spin-waiting doubled CPU and wall time (benchmarks/backends_100k.py: p50 45 -> 24 ms).
        return _top(np.einsum("ij,j->i", matrix, vector), self.candidates, rows)

    def _chunks_by_row(self, rows: list[int]) -> dict[int, Chunk]:
        if not rows:
            return {}
        marks = ",".join("?" * len(rows))
        found = self._query(f"SELECT row, json FROM chunks WHERE row IN ({marks})", rows)
        return {r: Chunk.model_validate_json(j) for r, j in found}

    def get_chunk(self, chunk_id: str) -> Chunk | None:
        found = self._query("SELECT json FROM chunks WHERE chunk_id=?", (chunk_id,))
        return Chunk.model_validate_json(found[0][0]) if found else None

    def chunks_of(self, document_id: str) -> list[Chunk]:
        found = self._query(
            "SELECT json FROM chunks WHERE document_id=? ORDER BY row", (document_id,)
        )
        return [Chunk.model_validate_json(j) for (j,) in found]

    def get_document(self, document_id: str) -> Document | None:
        found = self._query("SELECT json FROM documents WHERE document_id=?", (document_id,))
        return Document.model_validate_json(found[0][0]) if found else None

    def count(self) -> dict[str, int]:
        docs = self._query("SELECT count(*) FROM documents")[0][0]
        chunks = self._query("SELECT count(*) FROM chunks")[0][0]
        return {
            "documents": docs,
            "chunks": chunks,
            "dense": int(self._dense.shape[0]),
            "lexical": self._lexical.count(),
        }

    def close(self) -> None:
        if self._legs is not None:
            self._legs.shutdown()
        self._conn.close()

