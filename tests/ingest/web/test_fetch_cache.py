"""The fetch cache keeps what a conditional request needs, and never a damaged body."""

from __future__ import annotations

import sqlite3

from citadel.ingest.web.fetch_cache import CachedResponse, FetchCache


def test_a_response_with_a_validator_is_kept_and_one_without_is_not(tmp_path):
    cache = FetchCache.for_home(tmp_path)
    kept = CachedResponse("https://h/a", '"v1"', None, "text/html", b"<p>a</p>")
    cache.put(kept)
    cache.put(CachedResponse("https://h/b", None, None, "text/html", b"<p>b</p>"))
    assert cache.get("https://h/a") == kept
    assert cache.get("https://h/b") is None
    assert cache.path == tmp_path / "cache" / "web.sqlite"


def test_a_stored_body_that_no_longer_matches_its_hash_is_missing(tmp_path):
    cache = FetchCache.for_home(tmp_path)
    cache.put(CachedResponse("https://h/a", None, "Mon, 01 Jun 2026 00:00:00 GMT",
                             "text/html", b"<p>a</p>"))
    with sqlite3.connect(cache.path) as db:
        db.execute("UPDATE responses SET body = ?", (b"<p>tampered</p>",))
    assert cache.get("https://h/a") is None
