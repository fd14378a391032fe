"""Sitemaps and sitemap indexes, plain or gzipped; XML with a document type refused."""

from __future__ import annotations

import gzip

import pytest

from citadel.ingest.web.fetch import Fetched
from citadel.ingest.web.sitemap import NotASitemap, Sitemap, is_sitemap, parse_sitemap

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
URLSET = (f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {NS}>'
          "<url><loc> https://help.example.com/a </loc><lastmod>2026-01-01</lastmod></url>"
          "<url><loc>https://help.example.com/b</loc></url><url><loc></loc></url></urlset>")
INDEX = (f"<sitemapindex {NS}><sitemap><loc>https://help.example.com/s1.xml</loc></sitemap>"
         "</sitemapindex>")


def test_a_urlset_lists_pages_and_an_index_lists_sitemaps():
    assert parse_sitemap(URLSET.encode(), 10_000) == Sitemap(
        pages=("https://help.example.com/a", "https://help.example.com/b"))
    assert parse_sitemap(INDEX.encode(), 10_000) == Sitemap(
        sitemaps=("https://help.example.com/s1.xml",))


def test_a_gzipped_sitemap_is_read_within_the_size_bound():
    packed = gzip.compress(URLSET.encode())
    assert parse_sitemap(packed, 10_000).pages[0] == "https://help.example.com/a"
    bomb = gzip.compress(b"<urlset>" + b" " * 1_000_000 + b"</urlset>")
    with pytest.raises(NotASitemap, match="too large once decompressed"):
        parse_sitemap(bomb, 100_000)


@pytest.mark.parametrize(("body", "reason"), [
    (b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">]><urlset>&lol;</urlset>',
     "document type declaration"),
    (b"<urlset><url>", "not well-formed XML"),
    (b"<rss><channel/></rss>", r"root is <rss>, not <urlset> or <sitemapindex>"),
])
def test_what_is_not_a_plain_sitemap_is_refused_with_the_reason(body, reason):
    with pytest.raises(NotASitemap, match=reason):
        parse_sitemap(body, 10_000)


def test_a_sitemap_is_told_from_a_page_by_type_or_by_its_opening():
    def fetched(content_type: str, body: bytes) -> Fetched:
        return Fetched("https://h/x", content_type, None, body)

    assert is_sitemap(fetched("application/xml", b"<anything/>"))
    assert is_sitemap(fetched("text/plain", b"\n  " + URLSET.encode()))
    assert not is_sitemap(fetched("text/html", b"<!doctype html><p>page</p>"))
