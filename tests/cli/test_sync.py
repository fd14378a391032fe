"""`citadel ingest URL` and `citadel sync` through the real CLI process, against the
loopback help centre (tests/ingest/web/help_centre.py)."""

from __future__ import annotations

import subprocess
import sys

from tests.cli.test_cli import environment

WEB = {"CITADEL_EMBEDDER": "hashing", "CITADEL_FETCH_DELAY": "0",
       "CITADEL_FETCH_ALLOW_PRIVATE": "1"}


def citadel(home, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "citadel", *args], capture_output=True,
                          text=True, env={**environment(home), **WEB, **env}, timeout=300)


def test_ingest_takes_a_url_reports_what_it_skipped_and_why(help_site, tmp_path):
    out = citadel(tmp_path / "home", "ingest", help_site.url("/"))
    assert out.returncode == 0, out.stderr
    assert "built snapshot kb-" in out.stdout and "5 documents" in out.stdout
    assert (f"skipped {help_site.url('/private/staff-notes')}: disallowed by the site's "
            "robots.txt") in out.stderr
    assert "crawling 127.0.0.1" in out.stderr  # progress, on stderr
    quiet = citadel(tmp_path / "home", "ingest", "-q", help_site.url("/"))
    assert "crawling" not in quiet.stderr and "reused snapshot" in quiet.stdout


def test_without_the_setting_a_loopback_site_is_refused_with_a_message(site, tmp_path):
    site.page("/", "<p>internal</p>")
    out = citadel(tmp_path / "home", "ingest", site.url("/"),
                  CITADEL_FETCH_ALLOW_PRIVATE="0")
    assert out.returncode == 1
    assert "could be read" in out.stderr and "nothing was built" in out.stderr
    assert "127.0.0.1 is a loopback address: refused" in out.stderr
    assert "Traceback" not in out.stderr and site.requests == []


def test_a_url_with_credentials_is_an_error_not_a_traceback(tmp_path):
    out = citadel(tmp_path / "home", "ingest", "https://admin:pw@help.example.com/")
    assert out.returncode == 1 and "sends no credentials" in out.stderr
    assert "Traceback" not in out.stderr


def test_sync_once_builds_then_finds_the_site_unchanged(help_site, tmp_path):
    first = citadel(tmp_path / "home", "sync", "--once", "-q", help_site.url("/sitemap.xml"))
    assert first.returncode == 0, first.stderr
    assert "changed:" in first.stdout and "active snapshot is now" in first.stdout
    snapshot = first.stdout.split("active snapshot is now ")[1].split()[0]
    second = citadel(tmp_path / "home", "sync", "--once", "-q", help_site.url("/sitemap.xml"))
    assert f"unchanged: snapshot {snapshot}" in second.stdout
