"""Sitemaps (sitemaps.org): a `<urlset>` lists a site's pages, a `<sitemapindex>` lists more
sitemaps. A gzipped sitemap (`sitemap.xml.gz`) is read too, never past the page size bound.

The XML comes from the network, so a document type declaration is refused outright: a
sitemap never needs one, and entity definitions are how XML expands a few bytes into
gigabytes or reads local files.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
import zlib
from dataclasses import dataclass

from citadel.ingest.web.fetch import Fetched

TYPES = ("application/xml", "text/xml", "application/gzip", "application/x-gzip")
_XML_START = re.compile(rb"^(?:\xef\xbb\xbf)?\s*<(?:\?xml|urlset|sitemapindex)\b")


class NotASitemap(Exception):
    """The message says why the body is not a sitemap."""


@dataclass(frozen=True)
class Sitemap:
    pages: tuple[str, ...] = ()  # <urlset>: the pages' URLs
    sitemaps: tuple[str, ...] = ()  # <sitemapindex>: more sitemaps


def is_sitemap(fetched: Fetched) -> bool:
    """Whether a fetched start URL is a sitemap rather than a page: XML (or gzip) by its
    type, or a body that opens like XML whatever the server calls it."""
    return fetched.content_type in TYPES or bool(_XML_START.match(fetched.body[:512]))


def parse_sitemap(body: bytes, max_bytes: int) -> Sitemap:
    if body[:2] == b"\x1f\x8b":
        body = _gunzip(body, max_bytes)
    if re.search(rb"<!DOCTYPE|<!ENTITY", body, re.IGNORECASE):
        raise NotASitemap("XML with a document type declaration (refused: a sitemap needs "
                          "none, and entities can expand without bound)")
    try:
        root = ET.fromstring(body)
    except ET.ParseError as exc:
        raise NotASitemap(f"not well-formed XML ({exc})") from None
    kind = _local(root.tag)
    entry = {"urlset": "url", "sitemapindex": "sitemap"}.get(kind)
    if entry is None:
        raise NotASitemap(f"XML whose root is <{kind}>, not <urlset> or <sitemapindex>")
    locs = tuple((loc.text or "").strip() for item in root if _local(item.tag) == entry
                 for loc in item if _local(loc.tag) == "loc" and (loc.text or "").strip())
    return Sitemap(pages=locs) if kind == "urlset" else Sitemap(sitemaps=locs)


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _gunzip(body: bytes, max_bytes: int) -> bytes:
    try:
        out = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(body, max_bytes + 1)
    except zlib.error as exc:
        raise NotASitemap(f"broken gzip ({exc})") from None
    if len(out) > max_bytes:
        raise NotASitemap(f"too large once decompressed (more than {max_bytes:,} bytes)")
    return out
