"""One GET within limits: every way a page can fail becomes a reason, never a crash."""

from __future__ import annotations

import dataclasses

import pytest

from citadel.ingest.web.fetch import USER_AGENT, Fetcher, FetchFailed
from citadel.ingest.web.fetch_cache import FetchCache
from tests.ingest.web.help_centre import HTML, Route

PAGE = ("text/html",)


def limited(fetcher: Fetcher, **limits) -> Fetcher:
    return Fetcher(dataclasses.replace(fetcher.limits, **limits), fetcher.cache)


def test_a_page_is_fetched_with_citadels_user_agent_and_no_cookie_is_kept(site, fetcher):
    site.page("/a", "<p>A</p>", headers={"Set-Cookie": "session=secret; Path=/"})
    site.page("/b", "<p>B</p>")
    fetched = fetcher.get(site.url("/a"), PAGE)
    assert (fetched.content_type, fetched.charset, fetched.body) == ("text/html", "utf-8",
                                                                     b"<p>A</p>")
    fetcher.get(site.url("/b"), PAGE)
    sent = site.requests[-1].headers
    assert sent["user-agent"] == USER_AGENT and USER_AGENT.startswith("Citadel/")
    assert "cookie" not in sent and "authorization" not in sent


def test_a_stalled_server_times_out(site, fetcher):
    site.page("/slow", "<p>late</p>", delay=2.0)
    with pytest.raises(FetchFailed, match=r"timed out \(more than 0.3 s\)"):
        limited(fetcher, timeout=0.3).get(site.url("/slow"), PAGE)


def test_a_body_that_trickles_in_times_out_as_a_whole(site, fetcher):
    # Each byte arrives well within the read timeout; the page as a whole does not.
    site.page("/drip", "<p>" + "x" * 200 + "</p>", trickle=0.01)
    with pytest.raises(FetchFailed, match="timed out"):
        limited(fetcher, timeout=0.5).get(site.url("/drip"), PAGE)


def test_an_oversized_page_is_refused_by_its_declared_length_and_by_what_arrives(site, fetcher):
    site.page("/big", "<p>" + "x" * 5000 + "</p>")
    site.page("/big-unannounced", "<p>" + "x" * 5000 + "</p>", length=False)
    small = limited(fetcher, max_bytes=1000)
    with pytest.raises(FetchFailed, match=r"too large \(5,007 bytes > 1,000\)"):
        small.get(site.url("/big"), PAGE)
    with pytest.raises(FetchFailed, match=r"too large \(more than 1,000 bytes\)"):
        small.get(site.url("/big-unannounced"), PAGE)


def test_a_type_the_caller_does_not_read_is_refused(site, fetcher):
    site.routes["/logo"] = Route(b"\x89PNG", headers={"Content-Type": "image/png"})
    with pytest.raises(FetchFailed, match="unsupported content type image/png"):
        fetcher.get(site.url("/logo"), PAGE)


@pytest.mark.parametrize(("status", "reason"), [(404, r"not found \(HTTP 404\)"),
                                                (500, r"server error \(HTTP 500\)"),
                                                (403, r"HTTP 403")])
def test_an_error_status_is_the_reason(site, fetcher, status, reason):
    site.routes["/x"] = Route(b"no", status, {"Content-Type": HTML})
    with pytest.raises(FetchFailed, match=reason) as failed:
        fetcher.get(site.url("/x"), PAGE)
    assert failed.value.status == status


def test_redirects_are_followed_only_to_urls_the_caller_allows(site, fetcher):
    site.page("/new", "<p>moved here</p>")
    site.routes["/old"] = Route(status=301, headers={"Location": "/new"})
    elsewhere = site.url("/new").replace("127.0.0.1", "localhost")
    site.routes["/away"] = Route(status=302, headers={"Location": elsewhere})
    on_this_host = lambda url: url.startswith(site.base)  # noqa: E731
    assert fetcher.get(site.url("/old"), PAGE, on_this_host).url == site.url("/new")
    with pytest.raises(FetchFailed, match=f"redirects to {elsewhere}, outside the allowed"):
        fetcher.get(site.url("/away"), PAGE, on_this_host)
    assert site.fetched("/new") == 1  # the other host was never asked
    site.routes["/loop"] = Route(status=302, headers={"Location": "/loop"})
    with pytest.raises(FetchFailed, match="more than 5 redirects"):
        fetcher.get(site.url("/loop"), PAGE)


def test_fetching_again_asks_whether_the_page_changed_and_a_304_reuses_the_stored_body(
        site, fetcher):
    site.page("/faq", "<p>Version 1</p>")
    first = fetcher.get(site.url("/faq"), PAGE)
    again = fetcher.get(site.url("/faq"), PAGE)
    asked = site.requests[-1].headers
    assert "if-none-match" in asked and not first.not_modified
    assert again.not_modified and again.body == first.body == b"<p>Version 1</p>"
    site.page("/faq", "<p>Version 2</p>")
    changed = fetcher.get(site.url("/faq"), PAGE)
    assert not changed.not_modified and changed.body == b"<p>Version 2</p>"


def test_without_a_cache_no_request_is_conditional(site, fetcher):
    site.page("/faq", "<p>Version 1</p>")
    plain = Fetcher(fetcher.limits)
    plain.get(site.url("/faq"), PAGE)
    plain.get(site.url("/faq"), PAGE)
    assert all("if-none-match" not in r.headers for r in site.requests)


def test_requests_are_spaced_by_the_configured_delay(site, fetcher):
    site.page("/a", "<p>A</p>")
    clock, waits = [100.0], []
    paced = Fetcher(dataclasses.replace(fetcher.limits, delay=2.0),
                    clock=lambda: clock[0], sleep=waits.append)
    paced.get(site.url("/a"), PAGE)
    clock[0] += 0.5
    paced.get(site.url("/a"), PAGE)
    assert waits == [1.5]


def test_the_body_is_decoded_in_the_charset_the_response_or_the_page_names(site, fetcher):
    site.routes["/latin"] = Route("<p>Café</p>".encode("latin-1"),
                                  headers={"Content-Type": "text/html; charset=ISO-8859-1"})
    site.routes["/meta"] = Route('<meta charset="iso-8859-1"><p>Café</p>'.encode("latin-1"),
                                 headers={"Content-Type": "text/html"})
    assert "Café" in fetcher.get(site.url("/latin"), PAGE).text()
    assert "Café" in fetcher.get(site.url("/meta"), PAGE).text()


def test_an_unreadable_fetch_cache_is_bypassed(site, fetcher, tmp_path):
    broken = tmp_path / "web.sqlite"
    broken.write_bytes(b"not a database" * 100)
    site.page("/a", "<p>A</p>")
    assert Fetcher(fetcher.limits, FetchCache(broken)).get(site.url("/a"), PAGE).body == \
        b"<p>A</p>"
