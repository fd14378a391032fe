"""The embedding cache: vectors keyed by (embedder fingerprint, SHA-256 of the embedded text),
and beside them each chunk's language analysis keyed by (analyser identity, SHA-256 of the
chunk's content).

Re-ingesting a corpus where a few documents changed embeds and analyses only the chunks whose
text changed; every other vector and analysis comes from here, so a new snapshot builds in
time proportional to the change. The cache is an accelerator, never a source of truth: an
unreadable cache is reported and bypassed, and a vector of the wrong size or an unreadable
analysis is treated as missing.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path

import numpy as np
from tqdm import tqdm

from citadel.knowledge.sqlite_wal import open_wal
from citadel.retrieval.embedders.base import Embedder

log = logging.getLogger(__name__)

EMBED_BATCH = 256
_LOOKUP_BATCH = 500  # stays under SQLite's bound-parameter limit


def embedder_key(embedder: Embedder) -> str:
    blob = json.dumps(embedder.fingerprint(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_EMBEDDINGS = """CREATE TABLE IF NOT EXISTS embeddings (
    embedder TEXT NOT NULL, text_sha256 TEXT NOT NULL, vector BLOB NOT NULL,
    PRIMARY KEY (embedder, text_sha256)) WITHOUT ROWID"""
_ANALYSES = """CREATE TABLE IF NOT EXISTS analyses (
    analyser TEXT NOT NULL, text_sha256 TEXT NOT NULL, analysis BLOB NOT NULL,
    PRIMARY KEY (analyser, text_sha256)) WITHOUT ROWID"""


class EmbeddingCache:
    """One SQLite file, safe for concurrent ingests (WAL, inserts that never overwrite)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def for_home(cls, home: Path) -> EmbeddingCache:
        return cls(home / "cache" / "embeddings.sqlite")

    def _db(self) -> AbstractContextManager[sqlite3.Connection]:
        return open_wal(self.path, _EMBEDDINGS, _ANALYSES)

    def _rows(self, sql: str, owner: str, keys: Sequence[str]) -> list[tuple[str, bytes]]:
        """`sql` (with `{marks}` for the keys) run over the keys in batches."""
        found: list[tuple[str, bytes]] = []
        with self._db() as db:
            for i in range(0, len(keys), _LOOKUP_BATCH):
                part = list(keys[i : i + _LOOKUP_BATCH])
                found += db.execute(sql.format(marks=",".join("?" * len(part))),
                                    [owner, *part]).fetchall()
        return found

    def _insert(self, sql: str, rows: list[tuple[str, str, bytes]], what: str) -> None:
        try:
            with self._db() as db, db:
                db.executemany(sql, rows)
        except sqlite3.Error as exc:
            log.warning("%s cache %s not writable: %s", what, self.path, exc)

    def get_many(self, embedder: str, keys: Sequence[str], dimension: int) -> dict[str, np.ndarray]:
        try:
            rows = self._rows("SELECT text_sha256, vector FROM embeddings WHERE embedder=? "
                              "AND text_sha256 IN ({marks})", embedder, keys)
        except sqlite3.Error as exc:
            log.warning("embedding cache %s unreadable, embedding everything: %s", self.path, exc)
            return {}
        width = dimension * 4
        return {key: np.frombuffer(blob, dtype=np.float32) for key, blob in rows
                if len(blob) == width}

    def put_many(self, embedder: str, items: Iterable[tuple[str, np.ndarray]]) -> None:
        self._insert("INSERT OR IGNORE INTO embeddings (embedder, text_sha256, vector) "
                     "VALUES (?, ?, ?)",
                     [(embedder, key, np.asarray(v, dtype=np.float32).tobytes())
                      for key, v in items], "embedding")

    def get_analyses(self, analyser: str, keys: Sequence[str]) -> dict[str, bytes]:
        """Stored analyses (compressed JSON) by content key; {} when the cache is unreadable."""
        try:
            return dict(self._rows("SELECT text_sha256, analysis FROM analyses WHERE "
                                   "analyser=? AND text_sha256 IN ({marks})", analyser, keys))
        except sqlite3.Error as exc:
            log.warning("analysis cache %s unreadable, analysing everything: %s", self.path, exc)
            return {}

    def put_analyses(self, analyser: str, items: Iterable[tuple[str, bytes]]) -> None:
        self._insert("INSERT OR IGNORE INTO analyses (analyser, text_sha256, analysis) "
                     "VALUES (?, ?, ?)", [(analyser, key, blob) for key, blob in items],
                     "analysis")

    def count(self) -> int:
        with self._db() as db:
            return int(db.execute("SELECT count(*) FROM embeddings").fetchone()[0])


def embed_cached(
    embedder: Embedder,
    texts: Sequence[str],
    cache: EmbeddingCache | None,
    progress: bool = False,
) -> tuple[np.ndarray, int]:
    """Vectors for `texts` and how many texts were actually embedded (cache misses).

    Identical texts are embedded once. New vectors are stored batch by batch, so a build that
    is killed midway still leaves its work for the next attempt.
    """
    out = np.zeros((len(texts), embedder.dimension), dtype=np.float32)
    keys = [text_key(t) for t in texts]
    ekey = embedder_key(embedder)
    known = cache.get_many(ekey, sorted(set(keys)), embedder.dimension) if cache else {}
    todo: dict[str, int] = {}  # text key -> first row that needs it
    for row, key in enumerate(keys):
        if key not in known:
            todo.setdefault(key, row)
    pending = list(todo.items())
    with tqdm(total=len(pending), desc="embedding", unit="chunk", disable=not progress) as bar:
        for i in range(0, len(pending), EMBED_BATCH):
            batch = pending[i : i + EMBED_BATCH]
            vectors = embedder.embed([texts[row] for _, row in batch])
            fresh = {key: vectors[j] for j, (key, _) in enumerate(batch)}
            known.update(fresh)
            if cache is not None:
                cache.put_many(ekey, fresh.items())
            bar.update(len(batch))
    for row, key in enumerate(keys):
        out[row] = known[key]
    return out, len(pending)
