"""An approximate dense index for large local snapshots.

Exact search reads the whole float32 matrix per query (153 MB at 100k chunks), so its cost
grows with the corpus. Past `Settings.ann_min_chunks` a snapshot also carries a faiss HNSW
graph over 8-bit scalar-quantised vectors (a quarter of the matrix's size); a query walks the
graph for `ann_ef_search` candidates (by default 400, more past 100k chunks: a graph's
recall at a given breadth falls as it grows) and rescores them exactly from the float32
matrix, which then only needs to be memory-mapped, not read. The exact scan stays the
reference (and the path for small snapshots and narrow filters).

faiss is an optional dependency (`pip install -e '.[ann]'`), imported lazily.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

INSTALL_HINT = "the ANN index needs faiss: pip install -e '.[ann]' (or pip install faiss-cpu)"
FILE = "ann.faiss"


class AnnUnavailable(RuntimeError):
    """faiss is not installed; the message says how to install it."""


def _faiss() -> Any:
    try:
        import faiss
    except ImportError:
        raise AnnUnavailable(INSTALL_HINT) from None
    return faiss


def available() -> bool:
    try:
        _faiss()
    except AnnUnavailable:
        return False
    return True


@dataclass(frozen=True)
class AnnParams:
    """What the built graph depends on (part of the snapshot fingerprint)."""

    m: int = 32
    ef_construction: int = 128

    def fingerprint(self) -> dict[str, Any]:
        return {"kind": "faiss-hnsw-sq8", "m": self.m, "ef_construction": self.ef_construction,
                "rescoring": "exact-float32"}


def build(vectors: np.ndarray, params: AnnParams, path: Path) -> None:
    """Write the HNSW graph of `vectors` (rows are chunk rows) to `path`."""
    faiss = _faiss()
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    index = faiss.IndexHNSWSQ(vectors.shape[1], faiss.ScalarQuantizer.QT_8bit, params.m,
                              faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = params.ef_construction
    index.train(vectors)
    for i in range(0, len(vectors), 65_536):  # bounded temporary memory while adding
        index.add(vectors[i : i + 65_536])
    faiss.write_index(index, str(path))


def default_ef_search(size: int) -> int:
    """The walk's breadth for a graph of `size` rows: 400 up to 100k, then growing with the
    square root of the size. Measured (benchmarks/ann_scale.py, hashing vectors): 400 gave
    dense recall@10 0.986 at 100k but 0.956 at 1M, where 1,200 gave 0.984."""
    return max(400, math.ceil(400 * math.sqrt(size / 100_000)))


class AnnIndex:
    """A loaded graph; `search` returns candidate rows, best first (approximate order).
    `ef_search` None: `default_ef_search` of the graph's size."""

    def __init__(self, path: Path, ef_search: int | None = None) -> None:
        faiss = _faiss()
        self._faiss = faiss
        self._index = faiss.read_index(str(path))
        self.size = int(self._index.ntotal)
        self.ef_search = ef_search or default_ef_search(self.size)

    def search(self, vector: np.ndarray, n: int, mask: np.ndarray | None = None) -> np.ndarray:
        faiss = self._faiss
        params = faiss.SearchParametersHNSW()
        params.efSearch = n  # a walk as broad as the pool it returns
        if mask is not None:
            # Kept rows as a bitmap (little-endian bit order, as faiss reads it).
            bits = np.packbits(mask.astype(np.uint8), bitorder="little")
            params.sel = faiss.IDSelectorBitmap(len(mask), faiss.swig_ptr(bits))
        query = np.ascontiguousarray(vector.reshape(1, -1), dtype=np.float32)
        _, rows = self._index.search(query, n, params=params)
        found = rows[0]
        return found[found >= 0]
