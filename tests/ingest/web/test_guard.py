"""Server-side request forgery: without `fetch_allow_private` a crawl reaches public addresses
only, judged after DNS resolution and again at every redirect."""

from __future__ import annotations

import pytest

from citadel.config import Settings
from citadel.ingest.web import guard
from citadel.ingest.web.fetch import Fetcher, FetchFailed
from citadel.ingest.web.guard import address_problem
from citadel.ingest.web.loading import fetch_limits
from tests.ingest.web.help_centre import Route, web_settings


@pytest.mark.parametrize(("ip", "problem"), [
    ("127.0.0.1", "a loopback address"),
    ("127.8.9.10", "a loopback address"),
    ("10.1.2.3", "a private address"),
    ("172.16.0.1", "a private address"),
    ("192.168.1.1", "a private address"),
    ("169.254.169.254", "a link-local address"),  # a cloud's metadata service
    ("0.0.0.0", "a private address"),
    ("100.64.0.1", "not a public address"),  # carrier-grade NAT
    ("224.0.0.1", "not a public address"),
    ("::1", "a loopback address"),
    ("fe80::1%eth0", "a link-local address"),
    ("fc00::1", "a private address"),
    ("::ffff:127.0.0.1", "a loopback address"),  # IPv4-mapped
    ("::ffff:10.0.0.1", "a private address"),
    ("2002:7f00:1::", "a loopback address"),  # 6to4 of 127.0.0.1
    ("64:ff9b::a9fe:a9fe", "a link-local address"),  # NAT64 of 169.254.169.254
    ("8.8.8.8", None),
    ("2606:4700:4700::1111", None),
])
def test_addresses_that_are_not_public_are_named(ip, problem):
    assert address_problem(ip) == problem


def strict(tmp_path) -> Fetcher:
    return Fetcher(fetch_limits(web_settings(tmp_path / "home", fetch_allow_private=False)))


@pytest.mark.parametrize(("url", "said"), [
    ("http://127.0.0.1:{port}/", r"127\.0\.0\.1 is a loopback address: refused"),
    ("http://[::1]:{port}/", r"::1 is a loopback address: refused"),
    ("http://localhost:{port}/", r"localhost resolves to (127\.0\.0\.1|::1), a loopback "
                                 r"address: refused"),
    ("http://10.0.0.1:{port}/", r"10\.0\.0\.1 is a private address: refused"),
    ("http://169.254.169.254/latest/meta-data/", r"169\.254\.169\.254 is a link-local address"),
    ("http://[::ffff:127.0.0.1]:{port}/", r"is a loopback address: refused"),
])
def test_without_the_setting_no_private_address_is_reached(site, tmp_path, url, said):
    site.page("/", "<p>internal</p>")
    fetcher = strict(tmp_path)
    with pytest.raises(FetchFailed, match=said) as refused:
        fetcher.get(url.format(port=site.server.server_address[1]), ("text/html",))
    assert "fetch_allow_private" in str(refused.value)
    assert site.requests == []


def test_a_redirect_to_a_private_address_is_refused_even_from_a_public_site(
        site, tmp_path, monkeypatch):
    # The test site stands in for a public one: its address passes, no other loopback does.
    real = guard.address_problem
    monkeypatch.setattr(guard, "address_problem",
                        lambda ip: None if ip == "127.0.0.1" else real(ip))
    site.page("/public", "<p>public</p>")
    site.routes["/to-metadata"] = Route(status=302, headers={
        "Location": "http://169.254.169.254/latest/meta-data/"})
    site.routes["/to-ipv6-loopback"] = Route(status=302, headers={
        "Location": f"http://[::1]:{site.server.server_address[1]}/public"})
    fetcher = strict(tmp_path)
    assert fetcher.get(site.url("/public"), ("text/html",)).body == b"<p>public</p>"
    with pytest.raises(FetchFailed, match=r"169\.254\.169\.254 is a link-local address"):
        fetcher.get(site.url("/to-metadata"), ("text/html",))
    with pytest.raises(FetchFailed, match=r"::1 is a loopback address"):
        fetcher.get(site.url("/to-ipv6-loopback"), ("text/html",))


def test_the_setting_allows_private_addresses_from_the_environment(site, tmp_path):
    site.page("/", "<p>intranet</p>")
    settings = Settings.load({"CITADEL_HOME": str(tmp_path / "home"),
                              "CITADEL_FETCH_ALLOW_PRIVATE": "1"})
    assert settings.fetch_allow_private
    fetcher = Fetcher(fetch_limits(settings))
    assert fetcher.get(site.url("/"), ("text/html",)).body == b"<p>intranet</p>"
