"""Is a local snapshot's data intact? Cheap checks readiness runs before serving it.

A truncated or overwritten file must be refused before it is served, not found by the first
request that reads it. Each check reads headers and counts, never every vector: the dense
matrix's `.npy` header against the chunk count and the file size, SQLite's `quick_check`
and row counts, and the tantivy index opened (it checks every segment file's footer) with
its document count.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np

from citadel.retrieval.lexical import LexicalIndex


def check_files(path: Path, chunks: int) -> str | None:
    """Why the snapshot at `path` cannot be served, naming the file, or None."""
    for check in (_check_sqlite, _check_dense, _check_lexical):
        problem = check(path, chunks)
        if problem:
            return problem
    return None


def _check_sqlite(path: Path, chunks: int) -> str | None:
    file = path / "chunks.sqlite"
    try:
        conn = sqlite3.connect(f"file:{file}?mode=ro", uri=True)
        try:
            verdict = conn.execute("PRAGMA quick_check").fetchone()[0]
            if verdict != "ok":
                return f"{file} is corrupt: {verdict}"
            rows = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
            conn.execute("SELECT count(*) FROM documents").fetchone()
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return f"{file} is unreadable: {exc}"
    if rows != chunks:
        return f"{file} holds {rows} chunks, the catalog records {chunks}"
    return None


def _check_dense(path: Path, chunks: int) -> str | None:
    file = path / "dense.npy"
    try:
        with file.open("rb") as fh:
            version = np.lib.format.read_magic(fh)
            read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                    else np.lib.format.read_array_header_2_0)
            shape, fortran, dtype = read(fh)
            offset = fh.tell()
        size = file.stat().st_size
    except (OSError, ValueError) as exc:
        return f"{file} is unreadable: {exc}"
    if dtype != np.float32 or len(shape) != 2 or fortran:
        return f"{file} is not a float32 matrix (dtype {dtype}, shape {shape})"
    if shape[0] != chunks:
        return f"{file} holds {shape[0]} vectors, the catalog records {chunks} chunks"
    expected = offset + shape[0] * shape[1] * dtype.itemsize
    if size != expected:
        return f"{file} is {size} bytes, its header promises {expected} (truncated?)"
    return None


def _check_lexical(path: Path, chunks: int) -> str | None:
    folder = path / "lexical"
    try:
        count = LexicalIndex(folder).count()
    except (OSError, ValueError) as exc:
        return f"the lexical index {folder} is unreadable: {str(exc)[:300]}"
    if count != chunks:
        return f"the lexical index {folder} holds {count} chunks, the catalog records {chunks}"
    return None
