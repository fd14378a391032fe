"""The fetch cache: what a URL returned last time, so that fetching it again can ask "has it
changed?" (`If-None-Match` / `If-Modified-Since`) and reuse the stored body on a 304.

One SQLite file under the home (`<home>/cache/web.sqlite`), keyed by the URL that returned
the body. Only responses with a validator (an ETag or a Last-Modified date) are kept: without
one there is nothing to ask. Like the embedding cache it is an accelerator, never a source of
truth: an unreadable or unwritable cache is reported and bypassed, and a stored body whose
SHA-256 no longer matches is treated as missing.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from citadel.knowledge.sqlite_wal import open_wal

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CachedResponse:
    url: str
    etag: str | None
    last_modified: str | None
    content_type: str
    body: bytes


_RESPONSES = """CREATE TABLE IF NOT EXISTS responses (
    url TEXT PRIMARY KEY, etag TEXT, last_modified TEXT,
    content_type TEXT NOT NULL, body_sha256 TEXT NOT NULL, body BLOB NOT NULL)
    WITHOUT ROWID"""


class FetchCache:
    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def for_home(cls, home: Path) -> FetchCache:
        return cls(home / "cache" / "web.sqlite")

    def _db(self) -> AbstractContextManager[sqlite3.Connection]:
        return open_wal(self.path, _RESPONSES)

    def get(self, url: str) -> CachedResponse | None:
        try:
            with self._db() as db:
                row = db.execute("SELECT etag, last_modified, content_type, body_sha256, body "
                                 "FROM responses WHERE url = ?", (url,)).fetchone()
        except sqlite3.Error as exc:
            log.warning("fetch cache %s unreadable, fetching in full: %s", self.path, exc)
            return None
        if row is None or hashlib.sha256(row[4]).hexdigest() != row[3]:
            return None
        return CachedResponse(url, row[0], row[1], row[2], row[4])

    def put(self, response: CachedResponse) -> None:
        if response.etag is None and response.last_modified is None:
            return  # nothing to ask the server next time
        try:
            with self._db() as db, db:
                db.execute("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?)",
                           (response.url, response.etag, response.last_modified,
                            response.content_type, hashlib.sha256(response.body).hexdigest(),
                            response.body))
        except sqlite3.Error as exc:
            log.warning("fetch cache %s not writable: %s", self.path, exc)
