"""One GET of a crawl, within limits: the whole request in `timeout` seconds, at most
`max_bytes` of body, only the content types the caller reads, redirects only to URLs the
caller allows (each one a new, checked connection: `guard`), a pause between requests, and a
conditional request when the fetch cache holds the URL (a 304 reuses the stored body).

Nothing is sent that the operator did not give: the User-Agent, what is accepted, and the
cache's validators. No cookies are kept or sent, no credentials (a URL's user and password
are dropped by `urls.normalise`), no proxy from the environment. Any failure is a
`FetchFailed` whose message is the reason shown in the ingest report.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from importlib import metadata

import httpx

from citadel.ingest.web.fetch_cache import CachedResponse, FetchCache
from citadel.ingest.web.guard import GuardedTransport, Refused
from citadel.ingest.web.urls import normalise

# Who is asking, so that a site's operator can tell (and address robots.txt rules to us).
USER_AGENT = (f"Citadel/{metadata.version('citadel')} (+Citadel grounded-answer engine; "
              "docs/ingestion.md#websites)")
MAX_REDIRECTS = 5
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_META_CHARSET = re.compile(rb"<meta[^>]+charset=[\"']?([A-Za-z0-9_-]+)", re.IGNORECASE)


@dataclass(frozen=True)
class FetchLimits:
    timeout: float  # seconds one request may take, headers and body
    max_bytes: int
    delay: float  # seconds between the starts of two requests
    allow_private: bool = False


@dataclass(frozen=True)
class Fetched:
    url: str  # after redirects
    content_type: str  # the media type, lower case, without parameters
    charset: str | None
    body: bytes
    robots_tag: str = ""  # the X-Robots-Tag header
    not_modified: bool = False  # a 304: `body` is the cached copy

    def text(self) -> str:
        """The body as text: in the charset the response (or else the page's own `<meta
        charset>`) names, else UTF-8; a byte that does not decode becomes U+FFFD rather than
        losing the page."""
        charset = self.charset or _meta_charset(self.body[:2048]) or "utf-8"
        try:
            return self.body.decode(charset, errors="replace")
        except LookupError:  # a charset Python does not know
            return self.body.decode("utf-8", errors="replace")


class FetchFailed(Exception):
    """Why a URL could not be used; `status` is the HTTP status when there was one."""

    def __init__(self, reason: str, status: int | None = None) -> None:
        super().__init__(reason)
        self.status = status


class Fetcher:
    def __init__(self, limits: FetchLimits, cache: FetchCache | None = None,
                 transport: httpx.BaseTransport | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.limits = limits
        self.cache = cache
        self.transport = transport or GuardedTransport(limits.allow_private, limits.timeout)
        self.clock = clock
        self.sleep = sleep
        self._last_start: float | None = None
        self.delay = limits.delay  # a crawl may lengthen it (robots.txt's Crawl-delay)

    def close(self) -> None:
        self.transport.close()

    def get(self, url: str, accept: Collection[str] | None,
            may_visit: Callable[[str], bool] = lambda _url: True) -> Fetched:
        """The body at `url` (normalised), following up to MAX_REDIRECTS redirects to URLs
        `may_visit` allows; `accept` lists the media types the caller reads (None: any)."""
        for _ in range(MAX_REDIRECTS + 1):
            try:
                fetched = self._once(url, accept)
            except Refused as exc:
                raise FetchFailed(str(exc)) from None
            except httpx.TimeoutException:
                raise FetchFailed(f"timed out (more than {self.limits.timeout:g} s)") from None
            except (httpx.HTTPError, httpx.InvalidURL) as exc:
                raise FetchFailed(f"could not be fetched: {exc}") from None
            if isinstance(fetched, Fetched):
                return fetched
            target = normalise(fetched, base=url)
            if target is None:
                raise FetchFailed(f"redirects to {fetched!r}, which is not an http(s) URL")
            if not may_visit(target):
                raise FetchFailed(f"redirects to {target}, outside the allowed hosts")
            url = target
        raise FetchFailed(f"more than {MAX_REDIRECTS} redirects")

    def _once(self, url: str, accept: Collection[str] | None) -> Fetched | str:
        """The response to one request: a `Fetched`, or the Location of a redirect."""
        cached = self.cache.get(url) if self.cache is not None else None
        headers = {"User-Agent": USER_AGENT,
                   "Accept": ", ".join([*(accept or ()), "*/*;q=0.1"]),
                   "Accept-Encoding": "gzip, deflate"}
        if cached is not None and cached.etag:
            headers["If-None-Match"] = cached.etag
        if cached is not None and cached.last_modified:
            headers["If-Modified-Since"] = cached.last_modified
        self._pause()
        started = self.clock()
        request = httpx.Request("GET", url, headers=headers,
                                extensions={"timeout": httpx.Timeout(self.limits.timeout)
                                            .as_dict()})
        response = self.transport.handle_request(request)
        try:
            status = response.status_code
            if status in _REDIRECTS and response.headers.get("location"):
                return response.headers["location"]
            if status == 304 and cached is not None:
                return Fetched(url, *_media_type(cached.content_type), cached.body,
                               response.headers.get("x-robots-tag", ""), not_modified=True)
            if status not in (200, 203):
                raise FetchFailed(_status_reason(status), status)
            content_type = response.headers.get("content-type", "")
            media_type, charset = _media_type(content_type)
            if accept is not None and media_type not in accept:
                raise FetchFailed(f"unsupported content type {media_type or '(none)'}")
            body = self._read(response, started)
        finally:
            response.close()
        if self.cache is not None:
            self.cache.put(CachedResponse(url, response.headers.get("etag"),
                                          response.headers.get("last-modified"), content_type,
                                          body))
        return Fetched(url, media_type, charset, body, response.headers.get("x-robots-tag", ""))

    def _pause(self) -> None:
        now = self.clock()
        if self._last_start is not None and now < self._last_start + self.delay:
            self.sleep(self._last_start + self.delay - now)
        self._last_start = self.clock()

    def _read(self, response: httpx.Response, started: float) -> bytes:
        """The decoded body, refused past `max_bytes` (counted after decompression, so a
        small compressed reply cannot expand past the bound) or past the time limit (a
        server that trickles its reply byte by byte never trips the per-read timeout)."""
        limit = self.limits.max_bytes
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise FetchFailed(f"too large ({int(declared):,} bytes > {limit:,})")
        parts: list[bytes] = []
        size = 0
        for part in response.iter_bytes():
            size += len(part)
            if size > limit:
                raise FetchFailed(f"too large (more than {limit:,} bytes)")
            if self.clock() - started > self.limits.timeout:
                raise FetchFailed(f"timed out (more than {self.limits.timeout:g} s)")
            parts.append(part)
        return b"".join(parts)


def _media_type(content_type: str) -> tuple[str, str | None]:
    """("text/html", "utf-8") of `text/html; charset=UTF-8`."""
    media_type, _, params = content_type.partition(";")
    charset = None
    for param in params.split(";"):
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip('"').lower()
    return media_type.strip().lower(), charset


def _meta_charset(head: bytes) -> str | None:
    found = _META_CHARSET.search(head)
    return found.group(1).decode("ascii").lower() if found else None


def _status_reason(status: int) -> str:
    if status == 404 or status == 410:
        return f"not found (HTTP {status})"
    if status >= 500:
        return f"server error (HTTP {status})"
    return f"HTTP {status}"
