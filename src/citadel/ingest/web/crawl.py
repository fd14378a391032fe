"""From a website's start URL (a page or a sitemap) to its pages, within bounds.

Breadth first from the start URL: a page's links are followed while they are in the site's
scope (`Website.in_scope`), up to `max_depth` links away; a sitemap's pages (and a sitemap
index's sitemaps) are fetched as listed, and their own links are not followed (a sitemap
says which pages there are). Every fetch asks the host's robots.txt first. The crawl stops at
`max_pages` fetches or after `max_seconds`, and says so. A page that fails is listed as
`Skipped` with its reason and the crawl goes on: one broken page never stops a site.

A page's source is its canonical URL (`<link rel=canonical>`) when that is on an allowed
host, else the URL it was finally fetched from; two URLs of one page (`/faq` and
`/faq?ref=nav`, both canonical `/faq`) make one page.
"""

from __future__ import annotations

import re
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from tqdm import tqdm

from citadel.ingest.loaders import Skipped
from citadel.ingest.web.fetch import Fetched, Fetcher, FetchFailed
from citadel.ingest.web.links import header_directives, page_links
from citadel.ingest.web.robots import Robots, read_robots
from citadel.ingest.web.site import Website
from citadel.ingest.web.sitemap import TYPES as SITEMAP_TYPES
from citadel.ingest.web.sitemap import NotASitemap, is_sitemap, parse_sitemap
from citadel.ingest.web.urls import host_of, origin

# The media types a page may have, and the format each is read as (`loaders`).
PAGE_FORMATS = {
    "text/html": "html", "application/xhtml+xml": "html", "application/pdf": "pdf",
    "text/plain": "text", "text/markdown": "markdown",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
}
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
NOINDEX = "the page asks not to be indexed (robots noindex)"
# Links to these are not pages: never fetched (the content type would refuse them anyway).
_NOT_A_PAGE = re.compile(r"\.(?:png|jpe?g|gif|svg|webp|avif|ico|bmp|css|m?js|json|rss|atom|"
                         r"zip|gz|tgz|tar|7z|rar|mp3|mp4|m4a|webm|avi|mov|woff2?|ttf|otf|eot|"
                         r"exe|dmg|apk|iso)$", re.IGNORECASE)


@dataclass(frozen=True)
class CrawlBounds:
    max_pages: int  # URLs fetched (pages and sitemaps; robots.txt aside)
    max_depth: int  # links away from the start URL
    max_seconds: float


@dataclass(frozen=True)
class Page:
    fetched: Fetched
    source: str  # the canonical URL (module docstring)

    @property
    def format(self) -> str:
        return PAGE_FORMATS[self.fetched.content_type]


@dataclass
class Crawl:
    pages: list[Page] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    attempted: list[str] = field(default_factory=list)  # every URL fetched or tried
    not_modified: int = 0  # pages the server said were unchanged (304)


@dataclass(frozen=True)
class _Visit:
    url: str
    depth: int
    kind: str  # "start" (a page or a sitemap), "page", "sitemap", "listed" (a sitemap's page)


def crawl(site: Website, fetcher: Fetcher, bounds: CrawlBounds, progress: bool = False,
          clock: Callable[[], float] = time.monotonic) -> Crawl:
    out = Crawl()
    deadline = clock() + bounds.max_seconds
    queue: deque[_Visit] = deque([_Visit(site.url, 0, "start")])
    seen = {site.url}
    robots: dict[str, Robots] = {}
    sources: set[str] = set()
    fetches = 0
    base_delay = fetcher.delay
    with tqdm(desc=f"crawling {host_of(site.url)}", unit="url", disable=not progress) as bar:
        while queue:
            if fetches >= bounds.max_pages or clock() > deadline:
                limit = (f"max_pages = {bounds.max_pages}" if fetches >= bounds.max_pages
                         else f"{bounds.max_seconds:g} s of crawling")
                out.skipped.append(Skipped(site.url, f"crawl stopped at {limit}: {len(queue)} "
                                                     "more URLs were not fetched"))
                break
            visit = queue.popleft()
            rules = robots.get(origin(visit.url))
            if rules is None:
                rules = robots[origin(visit.url)] = read_robots(origin(visit.url), fetcher,
                                                                site.allows_host)
                if rules.parser is None:
                    out.skipped.append(Skipped(f"{origin(visit.url)}/robots.txt",
                                               rules.closed))
            if rules.parser is None:
                continue
            if not rules.allows(visit.url):
                out.skipped.append(Skipped(visit.url, "disallowed by the site's robots.txt"))
                continue
            fetcher.delay = max(base_delay, rules.crawl_delay)
            fetches += 1
            out.attempted.append(visit.url)
            try:
                fetched = fetcher.get(visit.url, _accepted(visit.kind), site.allows_host)
                seen.add(fetched.url)
                if visit.kind == "sitemap" or (visit.kind == "start" and is_sitemap(fetched)):
                    _queue_sitemap(site, fetched, fetcher.limits.max_bytes, seen, queue)
                else:
                    page = _page(site, fetched, visit, bounds, seen, queue)
                    if page.source not in sources:
                        sources.add(page.source)
                        out.pages.append(page)
                        out.not_modified += fetched.not_modified
            except (FetchFailed, NotASitemap) as exc:
                out.skipped.append(Skipped(visit.url, str(exc)))
            bar.update(1)
            bar.set_postfix(pages=len(out.pages), unchanged=out.not_modified,
                            queued=len(queue), skipped=len(out.skipped), refresh=False)
    fetcher.delay = base_delay
    return out


def _accepted(kind: str) -> tuple[str, ...]:
    if kind == "sitemap":
        return SITEMAP_TYPES
    return (*PAGE_FORMATS, *SITEMAP_TYPES) if kind == "start" else tuple(PAGE_FORMATS)


def _queue_sitemap(site: Website, fetched: Fetched, max_bytes: int, seen: set[str],
                   queue: deque[_Visit]) -> None:
    sitemap = parse_sitemap(fetched.body, max_bytes)
    for url in sitemap.sitemaps:
        if site.allows_host(url) and _new(url, seen):
            queue.append(_Visit(url, 0, "sitemap"))
    for url in sitemap.pages:
        if site.in_scope(url) and _new(url, seen):
            queue.append(_Visit(url, 1, "listed"))


def _page(site: Website, fetched: Fetched, visit: _Visit, bounds: CrawlBounds,
          seen: set[str], queue: deque[_Visit]) -> Page:
    """The fetched page, its in-scope links queued. A page that asks not to be indexed is a
    `FetchFailed`, so that it is listed with that reason (its links are still followed)."""
    if fetched.content_type in SITEMAP_TYPES:
        raise FetchFailed(f"unsupported content type {fetched.content_type} (a sitemap is "
                          "read only as the start URL or from a sitemap index)")
    if fetched.content_type not in HTML_TYPES:
        if header_directives(fetched.robots_tag) & {"noindex", "none"}:
            raise FetchFailed(NOINDEX)
        return Page(fetched, fetched.url)
    links = page_links(fetched.text(), fetched.url, fetched.robots_tag)
    follows = visit.kind in ("start", "page")  # not a page a sitemap listed
    if follows and not links.nofollow and visit.depth < bounds.max_depth:
        for url in links.links:
            if (site.in_scope(url) and not _NOT_A_PAGE.search(urlsplit(url).path)
                    and _new(url, seen)):
                queue.append(_Visit(url, visit.depth + 1, "page"))
    if links.noindex:
        raise FetchFailed(NOINDEX)
    canonical = links.canonical
    source = canonical if canonical and site.allows_host(canonical) else fetched.url
    seen.add(source)  # a link to the canonical URL found later is this page again
    return Page(fetched, source)


def _new(url: str, seen: set[str]) -> bool:
    if url in seen:
        return False
    seen.add(url)
    return True
