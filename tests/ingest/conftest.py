"""A help-centre website on 127.0.0.1 for the ingest tests (`tests.ingest.web.help_centre`)."""

from __future__ import annotations

import pytest

from tests.ingest.web.help_centre import Site, help_centre, serve


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
        yield site
    assert other.requests == []
