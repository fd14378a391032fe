"""robots.txt: what a site asks crawlers to leave alone, read as RFC 9309 says.

The rules for the token `Citadel` (or `*`) decide which URLs of a host may be fetched. A
robots.txt that is missing (any 4xx) means no rules; one that cannot be fetched (5xx, a
timeout, a refused address) means the whole host is off limits until it can: the site may be
down, and its rules are unknown. `Crawl-delay` lengthens the pause between requests, up to
MAX_CRAWL_DELAY. The rules are matched by the standard library's `urllib.robotparser`, which
takes the first matching line of a group rather than the longest (a site that orders its
`Allow` after a broader `Disallow` is read more strictly than RFC 9309 reads it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from urllib.robotparser import RobotFileParser

from citadel.ingest.web.fetch import Fetcher, FetchFailed

AGENT = "Citadel"
MAX_CRAWL_DELAY = 30.0


@dataclass(frozen=True)
class Robots:
    parser: RobotFileParser | None  # None: nothing may be fetched (`closed` says why)
    closed: str = ""

    def allows(self, url: str) -> bool:
        return self.parser is not None and self.parser.can_fetch(AGENT, url)

    @property
    def crawl_delay(self) -> float:
        if self.parser is None:
            return 0.0
        delay = self.parser.crawl_delay(AGENT)
        return min(float(delay), MAX_CRAWL_DELAY) if delay else 0.0


def read_robots(origin: str, fetcher: Fetcher, may_visit: Callable[[str], bool]) -> Robots:
    """The robots.txt rules of `origin` (`scheme://host[:port]`)."""
    parser = RobotFileParser(f"{origin}/robots.txt")
    try:
        fetched = fetcher.get(f"{origin}/robots.txt", None, may_visit)
    except FetchFailed as exc:
        if exc.status is not None and 400 <= exc.status < 500:
            parser.parse([])  # no robots.txt: no rules
            return Robots(parser)
        return Robots(None, f"its robots.txt could not be read ({exc}), so nothing is fetched "
                            "from it (RFC 9309)")
    # Whatever its type: one served as HTML (a site's catch-all page) has no rules to find.
    parser.parse(fetched.body.decode("utf-8", errors="replace").splitlines())
    return Robots(parser)
