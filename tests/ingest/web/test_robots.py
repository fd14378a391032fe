"""robots.txt as RFC 9309 reads it: rules when there is one, none when it is missing, and
nothing fetched while it cannot be read."""

from __future__ import annotations

import pytest

from citadel.ingest.web.robots import MAX_CRAWL_DELAY, read_robots
from tests.ingest.web.help_centre import Route


def robots(site, fetcher, text: str | None = None, status: int = 200):
    if text is not None or status != 200:
        site.routes["/robots.txt"] = Route((text or "").encode(), status,
                                           {"Content-Type": "text/plain"})
    return read_robots(site.base, fetcher, lambda url: True)


def test_the_rules_for_citadel_or_any_crawler_decide(site, fetcher):
    rules = robots(site, fetcher, "User-agent: *\nDisallow: /private/\n\n"
                                  "User-agent: Citadel\nDisallow: /drafts/\n")
    assert rules.allows(site.url("/help/returns"))
    assert rules.allows(site.url("/private/x"))  # the Citadel group replaces the * one
    assert not rules.allows(site.url("/drafts/x"))
    everyone = robots(site, fetcher, "User-agent: *\nDisallow: /private/\n")
    assert not everyone.allows(site.url("/private/x"))


@pytest.mark.parametrize("status", [404, 410, 401, 403])
def test_a_missing_robots_txt_means_no_rules(site, fetcher, status):
    assert robots(site, fetcher, status=status).allows(site.url("/anything"))


@pytest.mark.parametrize("status", [500, 503])
def test_an_unreadable_robots_txt_closes_the_site(site, fetcher, status):
    rules = robots(site, fetcher, status=status)
    assert not rules.allows(site.url("/"))
    assert rules.closed.startswith("its robots.txt could not be read (server error")


def test_robots_txt_served_as_html_has_no_rules(site, fetcher):
    site.page("/robots.txt", "<html><body>Welcome!</body></html>")
    assert read_robots(site.base, fetcher, lambda url: True).allows(site.url("/x"))


def test_crawl_delay_is_read_and_bounded(site, fetcher):
    assert robots(site, fetcher, "User-agent: *\nCrawl-delay: 2\n").crawl_delay == 2.0
    assert robots(site, fetcher, "User-agent: *\nCrawl-delay: 86400\n").crawl_delay == \
        MAX_CRAWL_DELAY
    assert robots(site, fetcher, "User-agent: *\nDisallow:\n").crawl_delay == 0.0
