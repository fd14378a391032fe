"""Switching a SQLite file to write-ahead logging safely under concurrent first use."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def enable_wal(conn: sqlite3.Connection, attempts: int = 50) -> None:
    """Switch to WAL. On a brand-new file several connections may try at once, and SQLite
    answers "database is locked" without waiting for the busy timeout; the mode persists in
    the file, so retry briefly and let whichever connection won set it."""
    for attempt in range(attempts):
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == attempts - 1:
                raise
            time.sleep(0.01 * (attempt + 1))


@contextmanager
def open_wal(path: Path, *schema: str) -> Iterator[sqlite3.Connection]:
    """A connection to the SQLite file at `path` (its folder made), in WAL mode, with the
    `schema` statements (CREATE ... IF NOT EXISTS) run; closed on exit. The caches under a
    home (embeddings, fetched pages) are shared by concurrent ingests this way."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=30)
    try:
        enable_wal(conn)
        for statement in schema:
            conn.execute(statement)
        yield conn
    finally:
        conn.close()
