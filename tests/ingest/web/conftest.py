from __future__ import annotations

from pathlib import Path

import pytest

from citadel.config import Settings
from citadel.ingest.web.fetch import Fetcher
from citadel.ingest.web.fetch_cache import FetchCache
from citadel.ingest.web.loading import fetch_limits
from tests.conftest import hashing_settings
from tests.ingest.web.help_centre import Site, help_centre, serve


def web_settings(home: Path, **overrides) -> Settings:
    """The hashing embedder; loopback allowed (the test site is on 127.0.0.1), no pause
    between requests, a short timeout."""
    return hashing_settings(home, **{"fetch_allow_private": True, "fetch_delay": 0.0,
                                     "fetch_timeout": 2.0, **overrides})


@pytest.fixture
def site() -> Site:
    """An empty site on 127.0.0.1 (tests add their routes)."""
    with serve() as site:
        yield site


@pytest.fixture
def help_site(site: Site) -> Site:
    """The help centre of `help_centre`, with its partner-shop link pointing at a second
    server on another host name (localhost), which must never be asked for anything."""
    with serve() as other:
        help_centre(site, other_host=other.url("/partner-shop").replace("127.0.0.1",
                                                                          "localhost"))
        site.other = other  # type: ignore[attr-defined]
        yield site
    assert other.requests == []


@pytest.fixture
def fetcher(tmp_path: Path) -> Fetcher:
    fetcher = Fetcher(fetch_limits(web_settings(tmp_path / "home")),
                      FetchCache.for_home(tmp_path / "home"))
    yield fetcher
    fetcher.close()
