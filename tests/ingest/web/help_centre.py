"""A help-centre website for the tests, served from 127.0.0.1 by the standard library's HTTP
server in a thread. Nothing leaves the machine.

`Site` maps a path (with its query) to a `Route`: a status, headers and a body, with an
ETag by default (a request whose If-None-Match matches gets a 304), and optionally a delay
before the reply (a stalled server) or a body sent a byte at a time (a trickling one). Every
request is logged with its headers, so that tests can say what was (not) fetched and sent.
`help_centre(site)` fills a site with the pages of a small help centre.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from citadel.config import Settings
from tests.conftest import hashing_settings

HTML = "text/html; charset=utf-8"


def web_settings(home: Path, **overrides) -> Settings:
    """The hashing embedder; loopback allowed (the site is on 127.0.0.1), no pause between
    requests, a short timeout."""
    return hashing_settings(home, **{"fetch_allow_private": True, "fetch_delay": 0.0,
                                     "fetch_timeout": 2.0, **overrides})


@dataclass
class Route:
    body: bytes = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    etag: bool = True
    delay: float = 0.0  # seconds before the reply
    trickle: float = 0.0  # seconds between the body's bytes
    length: bool = True  # False: no Content-Length, the body ends when the connection does


@dataclass(frozen=True)
class Request:
    path: str
    headers: dict[str, str]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    site: Site

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client that gave up (a timeout test) is expected


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body leave at once, not 40 ms apart

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - quiet
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        site = self.server.site
        with site.lock:
            site.requests.append(Request(self.path, {k.lower(): v
                                                     for k, v in self.headers.items()}))
            route = site.routes.get(self.path)
        if route is None:
            route = Route(b"<h1>Not found</h1>", 404, {"Content-Type": HTML}, etag=False)
        time.sleep(route.delay)
        tag = f'"{hashlib.sha256(route.body).hexdigest()[:16]}"'
        if route.etag and route.status == 200 and self.headers.get("If-None-Match") == tag:
            with site.lock:
                site.not_modified += 1
            self.send_response(304)
            self.send_header("ETag", tag)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(route.status)
        for name, value in route.headers.items():
            self.send_header(name, value)
        if route.etag and route.status == 200:
            self.send_header("ETag", tag)
        if route.length:
            self.send_header("Content-Length", str(len(route.body)))
        else:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if not route.trickle:
            self.wfile.write(route.body)
            return
        for byte in route.body:
            self.wfile.write(bytes([byte]))
            self.wfile.flush()
            time.sleep(route.trickle)


class Site:
    def __init__(self, server: _Server) -> None:
        self.server = server
        self.lock = threading.Lock()
        self.routes: dict[str, Route] = {}
        self.requests: list[Request] = []
        self.not_modified = 0  # 304s sent
        self.base = f"http://127.0.0.1:{server.server_address[1]}"

    def url(self, path: str = "/") -> str:
        return self.base + path

    def page(self, path: str, html: str, **options) -> None:
        headers = {"Content-Type": HTML, **options.pop("headers", {})}
        self.routes[path] = Route(html.encode(), headers=headers, **options)

    def fetched(self, path: str) -> int:
        """How many times `path` was requested."""
        return sum(r.path == path for r in self.requests)


@contextmanager
def serve() -> Iterator[Site]:
    server = _Server(("127.0.0.1", 0), _Handler)
    site = server.site = Site(server)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield site
    finally:
        server.shutdown()
        server.server_close()


def article(title: str, body: str, links: str = "", extra_head: str = "") -> str:
    """A help-centre page: the site's header, navigation, sidebar and footer around the
    article, and a "Still need help?" box (no landmark marks it) on every page."""
    return f"""<!doctype html>
<html><head><title>{title}</title>{extra_head}</head><body>
<header><a href="/">Acme Help Centre</a><form role="search"><input name="q"></form></header>
<nav><ul>
  <li><a href="/help/returns">Returns</a></li>
  <li><a href="/help/shipping">Shipping</a></li>
  <li><a href="/help/gift-cards">Gift cards</a></li>
</ul></nav>
<main><article><h1>{title}</h1>{body}</article>{links}</main>
<aside><h2>Popular articles</h2><p>Tracking your parcel and changing your address.</p></aside>
<div class="contact"><p>Still need help? Our support team answers every day from 8am.</p></div>
<footer><p>Copyright Acme Ltd. All rights reserved.</p></footer>
</body></html>"""


RETURNS = ("<p>Returns are accepted within 30 days of delivery.</p>"
           "<p>Refunds go back to the original payment method within 5 business days.</p>")
SHIPPING = "<p>UK express delivery costs £9.95 and arrives the next working day.</p>"
GIFT_CARDS = "<p>Gift cards are valid for 24 months from the date of purchase.</p>"


def help_centre(site: Site, other_host: str = "http://localhost:9/elsewhere") -> None:
    """The pages of a small help centre: a home page linking to three articles, a PDF, a page
    robots.txt keeps crawlers from and a page on another host; a sitemap of the articles."""
    site.page("/", article("Help Centre", "<p>Answers about orders, returns and delivery.</p>",
                           links=f"""<ul><li><a href="/help/returns?ref=home">Returns</a></li>
<li><a href="/help/warranty.pdf">Warranty (PDF)</a></li>
<li><a href="/private/staff-notes">Staff notes</a></li>
<li><a href="{other_host}">Our partner shop</a></li></ul>"""))
    site.page("/help/returns", article("Returns", RETURNS, extra_head=(
        f'<link rel="canonical" href="{site.url("/help/returns")}">')))
    site.page("/help/returns?ref=home", article("Returns", RETURNS, extra_head=(
        f'<link rel="canonical" href="{site.url("/help/returns")}">')))
    site.page("/help/shipping", article("Shipping", SHIPPING))
    site.page("/help/gift-cards", article("Gift cards", GIFT_CARDS))
    site.routes["/help/warranty.pdf"] = Route(
        pdf("Every kettle carries a warranty of two years from delivery."),
        headers={"Content-Type": "application/pdf"})
    site.page("/private/staff-notes", article("Staff notes", "<p>The door code is 4711.</p>"))
    site.routes["/robots.txt"] = Route(b"User-agent: *\nDisallow: /private/\n",
                                       headers={"Content-Type": "text/plain"})
    urls = "".join(f"<url><loc>{site.url(p)}</loc></url>"
                   for p in ("/help/returns", "/help/shipping", "/help/gift-cards"))
    site.routes["/sitemap.xml"] = Route(
        ('<?xml version="1.0" encoding="UTF-8"?><urlset '
         f'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>').encode(),
        headers={"Content-Type": "application/xml"})


def pdf(text: str) -> bytes:
    """A one-page PDF that says `text` (Helvetica, uncompressed), for pypdf to read."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (n, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1, xref)
    return bytes(out)
