"""What a fetched HTML page says about the crawl (its text is `loaders.extract_html`'s):
the links it holds, its canonical URL and whether it asks not to be indexed or followed.

Links are taken from the whole page, navigation included: the navigation is how a crawler
finds the pages, even though its text is not kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from html.parser import HTMLParser

from citadel.ingest.web.urls import normalise


@dataclass(frozen=True)
class PageLinks:
    links: tuple[str, ...]  # normalised, in page order, each once
    canonical: str | None  # `<link rel=canonical>`, normalised
    noindex: bool = False  # `<meta name=robots content=noindex>` (or "none")
    nofollow: bool = False  # `... content=nofollow` (or "none"): its links are not followed


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.base: str | None = None
        self.hrefs: list[str] = []
        self.canonical: str | None = None
        self.robots: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v for k, v in attrs if v is not None}
        href = a.get("href")
        rel = set((a.get("rel") or "").lower().split())
        if tag == "base" and href and self.base is None:
            self.base = href
        elif tag in ("a", "area") and href:
            self.hrefs.append(href)
        elif tag == "link" and "canonical" in rel and href and self.canonical is None:
            self.canonical = href
        elif tag == "meta" and (a.get("name") or "").lower() == "robots":
            self.robots.update(v.strip().lower() for v in (a.get("content") or "").split(","))


def header_directives(robots_tag: str) -> set[str]:
    """The directives of an X-Robots-Tag header (`noindex, nofollow`), which applies to any
    type of page (a PDF too)."""
    return {v.strip().lower() for v in robots_tag.split(",")}


def page_links(html: str, url: str, robots_tag: str = "") -> PageLinks:
    """The links of the page at `url` (its final URL), resolved against its `<base>`.
    `robots_tag` is the response's X-Robots-Tag header, which says the same as the meta."""
    parser = _Links()
    parser.feed(html)
    parser.close()
    base = normalise(parser.base, url) if parser.base else url
    links = dict.fromkeys(link for href in parser.hrefs
                          if (link := normalise(href, base or url)) is not None)
    robots = parser.robots | header_directives(robots_tag)
    return PageLinks(
        links=tuple(links),
        canonical=normalise(parser.canonical, base or url) if parser.canonical else None,
        noindex=bool(robots & {"noindex", "none"}),
        nofollow=bool(robots & {"nofollow", "none"}),
    )
