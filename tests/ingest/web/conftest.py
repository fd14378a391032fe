from __future__ import annotations

from pathlib import Path

import pytest

from citadel.ingest.web.fetch import Fetcher
from citadel.ingest.web.fetch_cache import FetchCache
from citadel.ingest.web.loading import fetch_limits
from tests.ingest.web.help_centre import web_settings


@pytest.fixture
def fetcher(tmp_path: Path) -> Fetcher:
    fetcher = Fetcher(fetch_limits(web_settings(tmp_path / "home")),
                      FetchCache.for_home(tmp_path / "home"))
    yield fetcher
    fetcher.close()
