"""Switching a SQLite file to write-ahead logging safely under concurrent first use."""

from __future__ import annotations

import sqlite3
import time


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
