"""URLs told from paths, and one form per page."""

from __future__ import annotations

from citadel.ingest.web.urls import is_url, normalise


def test_an_http_url_is_a_url_and_anything_else_a_path():
    assert is_url("https://help.example.com/") and is_url("HTTP://h/")
    assert not is_url("help.example.com") and not is_url("kb/http:/x") and not is_url(3)


def test_one_form_per_page():
    assert normalise("HTTPS://Help.Example.COM:443") == "https://help.example.com/"
    assert normalise("http://h:80/a?b=1#part") == "http://h/a?b=1"
    assert normalise("http://h:8080/a") == "http://h:8080/a"
    assert normalise("https://user:pw@h/a") == "https://h/a"
    assert normalise("http://[::1]:8000/") == "http://[::1]:8000/"
    assert normalise("../b", base="https://h/docs/a/") == "https://h/docs/b"
    for other in ("mailto:x@h", "javascript:alert(1)", "ftp://h/", "http://", "http://h:99999/"):
        assert normalise(other) is None
