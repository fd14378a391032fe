"""From a start URL or a sitemap to a site's pages: in scope, as robots.txt allows, within
bounds, and every failure a listed reason while the crawl goes on."""

from __future__ import annotations

import dataclasses

from citadel.ingest.web.crawl import CrawlBounds, crawl
from citadel.ingest.web.fetch import Fetcher
from citadel.ingest.web.site import Website
from tests.ingest.web.help_centre import HTML, Route, pdf

BOUNDS = CrawlBounds(max_pages=100, max_depth=5, max_seconds=60)


def sources(found) -> list[str]:
    return [page.source for page in found.pages]


def test_a_crawl_from_the_home_page_finds_the_sites_pages_and_no_others(help_site, fetcher):
    found = crawl(Website(url=help_site.url("/")), fetcher, BOUNDS)
    assert sources(found) == [help_site.url(p) for p in (
        "/", "/help/returns", "/help/shipping", "/help/gift-cards", "/help/warranty.pdf")]
    # Two URLs of one page (canonical /help/returns) make one page.
    assert help_site.fetched("/help/returns?ref=home") == 1
    # robots.txt keeps the crawl out, and says so.
    assert help_site.fetched("/private/staff-notes") == 0
    assert [(s.path, s.reason) for s in found.skipped] == [
        (help_site.url("/private/staff-notes"), "disallowed by the site's robots.txt")]
    # (help_site checks that the partner shop on another host was never asked.)


def test_a_crawl_from_a_sitemap_fetches_the_pages_it_lists_and_follows_none_of_their_links(
        help_site, fetcher):
    found = crawl(Website(url=help_site.url("/sitemap.xml")), fetcher, BOUNDS)
    assert sources(found) == [help_site.url(p) for p in (
        "/help/returns", "/help/shipping", "/help/gift-cards")]
    assert help_site.fetched("/") == 0 and found.skipped == []


def test_a_sitemap_index_leads_to_its_sitemaps(help_site, fetcher):
    help_site.routes["/sitemap-index.xml"] = Route(
        f"<sitemapindex><sitemap><loc>{help_site.url('/sitemap.xml')}</loc></sitemap>"
        "<sitemap><loc>https://elsewhere.example/sitemap.xml</loc></sitemap>"
        "</sitemapindex>".encode(), headers={"Content-Type": "text/xml"})
    found = crawl(Website(url=help_site.url("/sitemap-index.xml")), fetcher, BOUNDS)
    assert len(found.pages) == 3


def test_depth_page_count_and_time_bound_the_crawl_and_the_stop_is_reported(help_site,
                                                                            fetcher):
    site = Website(url=help_site.url("/"))
    shallow = crawl(site, fetcher, CrawlBounds(100, max_depth=0, max_seconds=60))
    assert sources(shallow) == [help_site.url("/")] and shallow.skipped == []
    few = crawl(site, fetcher, CrawlBounds(max_pages=2, max_depth=5, max_seconds=60))
    assert len(few.pages) == 2
    assert few.skipped[-1].path == help_site.url("/")
    assert few.skipped[-1].reason.startswith("crawl stopped at max_pages = 2: ")
    ticks = iter(range(0, 10_000, 60))  # every look at the clock: a minute later
    slow = crawl(site, fetcher, CrawlBounds(100, 5, max_seconds=100),
                 clock=lambda: next(ticks))
    assert len(slow.pages) == 1
    assert slow.skipped[-1].reason.startswith("crawl stopped at 100 s of crawling")


def test_include_and_exclude_decide_which_linked_pages_are_fetched(help_site, fetcher):
    site = Website(url=help_site.url("/"), include=["/help/*"], exclude=["/help/gift-*"])
    found = crawl(site, fetcher, BOUNDS)
    assert sources(found) == [help_site.url(p) for p in (
        "/", "/help/returns", "/help/shipping", "/help/warranty.pdf")]
    assert help_site.fetched("/help/gift-cards") == 0


def test_every_failing_page_is_listed_with_its_reason_and_the_crawl_goes_on(site, fetcher):
    site.page("/", "<p>Start</p>" + "".join(
        f'<a href="{p}">{p}</a>' for p in ("/gone", "/broken", "/download", "/hidden",
                                            "/big", "/manual.pdf", "/ok")))
    site.routes["/broken"] = Route(b"oops", 500, {"Content-Type": HTML})
    site.routes["/download"] = Route(b"PK", headers={"Content-Type": "application/zip"})
    site.page("/hidden", '<meta name="robots" content="noindex"><a href="/behind">b</a>')
    site.page("/behind", "<p>Found through a noindex page.</p>")
    site.page("/big", "<p>" + "x" * 3000 + "</p>")
    site.page("/ok", "<p>Fine.</p>")
    site.routes["/manual.pdf"] = Route(pdf("Internal manual."), headers={
        "Content-Type": "application/pdf", "X-Robots-Tag": "noindex"})
    small = Fetcher(dataclasses.replace(fetcher.limits, max_bytes=2000))
    found = crawl(Website(url=site.url("/")), small, BOUNDS)
    assert sources(found) == [site.url("/"), site.url("/ok"), site.url("/behind")]
    assert {s.path.removeprefix(site.base): s.reason for s in found.skipped} == {
        "/gone": "not found (HTTP 404)",
        "/broken": "server error (HTTP 500)",
        "/download": "unsupported content type application/zip",
        "/hidden": "the page asks not to be indexed (robots noindex)",
        "/big": "too large (3,007 bytes > 2,000)",
        "/manual.pdf": "the page asks not to be indexed (robots noindex)",
    }


def test_a_site_whose_robots_txt_cannot_be_read_is_not_crawled(site, fetcher):
    site.page("/", "<p>home</p>")
    site.routes["/robots.txt"] = Route(b"down", 503, {"Content-Type": "text/plain"})
    found = crawl(Website(url=site.url("/")), fetcher, BOUNDS)
    assert found.pages == [] and site.fetched("/") == 0
    assert [s.path for s in found.skipped] == [site.url("/robots.txt")]
    assert "could not be read (server error (HTTP 503))" in found.skipped[0].reason


def test_a_redirect_to_another_host_is_a_listed_failure(site, fetcher):
    elsewhere = site.url("/x").replace("127.0.0.1", "localhost")
    site.page("/", '<a href="/moved">moved</a>')
    site.routes["/moved"] = Route(status=301, headers={"Location": elsewhere})
    found = crawl(Website(url=site.url("/")), fetcher, BOUNDS)
    assert found.skipped[0].reason == f"redirects to {elsewhere}, outside the allowed hosts"
    assert site.fetched("/x") == 0
