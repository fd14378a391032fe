"""A page's links, canonical URL and robots meta, resolved against the page (or its base)."""

from __future__ import annotations

from citadel.ingest.web.links import page_links

PAGE = """<html><head><link rel="canonical" href="/help/returns">
<meta name="robots" content="noindex, nofollow"></head><body>
<nav><a href="/help/shipping#top">Shipping</a></nav>
<a href="gift-cards">Gift cards</a> <a href="mailto:help@example.com">mail</a>
<a href="javascript:alert(1)">x</a> <a href="https://user:pw@Other.Example:443/x">other</a>
<a href="/help/shipping">again</a></body></html>"""


def test_links_are_resolved_normalised_and_listed_once_navigation_included():
    links = page_links(PAGE, "https://help.example.com/help/returns?ref=nav")
    assert links.links == ("https://help.example.com/help/shipping",
                           "https://help.example.com/help/gift-cards",
                           "https://other.example/x")  # no credentials, no default port
    assert links.canonical == "https://help.example.com/help/returns"
    assert links.noindex and links.nofollow


def test_a_base_element_and_the_robots_header_count():
    html = '<base href="https://help.example.com/docs/"><a href="faq">FAQ</a>'
    links = page_links(html, "https://help.example.com/", robots_tag="noindex")
    assert links.links == ("https://help.example.com/docs/faq",)
    assert links.noindex and not links.nofollow
    assert not page_links("<p>plain</p>", "https://h/").noindex
