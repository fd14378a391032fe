"""A website's scope: its hosts, and the paths it includes and excludes."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from citadel.ingest.web.site import Website


def test_by_default_a_site_is_its_start_urls_host_every_path():
    site = Website(url="HTTPS://Help.Example.com")
    assert site.url == "https://help.example.com/"
    assert site.in_scope("https://help.example.com/any/page")
    assert site.in_scope("http://help.example.com:8080/x")  # the host, whatever the port
    assert not site.in_scope("https://example.com/")
    assert not site.in_scope("https://evil.help.example.com.attacker.net/")


def test_allowed_hosts_include_and_exclude_decide_what_is_fetched():
    site = Website(url="https://help.example.com/", allowed_hosts=["help.example.com",
                                                                    "Docs.Example.com"],
                   include=["/help/*"], exclude=["/help/archive/*"])
    assert site.in_scope("https://docs.example.com/help/returns")
    assert not site.in_scope("https://help.example.com/blog/post")
    assert not site.in_scope("https://help.example.com/help/archive/2019")
    assert site.allows_host("https://help.example.com/blog/post")  # a redirect may go there


@pytest.mark.parametrize(("values", "problem"), [
    ({"url": "ftp://files.example.com/"}, r"is not an http\(s\) URL"),
    ({"url": "https://admin:secret@help.example.com/"}, "sends no credentials"),
    ({"url": "https://h/", "include": ["help/*"]}, "is not a path glob"),
    ({"url": "https://h/", "max_pages": 0}, "greater than or equal to 1"),
    ({"url": "https://h/", "maxpages": 10}, "Extra inputs are not permitted"),
])
def test_a_malformed_website_is_refused_with_the_reason(values, problem):
    with pytest.raises(ValidationError, match=problem):
        Website(**values)
