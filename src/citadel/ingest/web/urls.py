"""URLs as sources: telling one from a path, and one form per page so that a page is fetched
and ingested once however it is linked."""

from __future__ import annotations

from urllib.parse import urljoin, urlsplit, urlunsplit

SCHEMES = ("http", "https")
DEFAULT_PORTS = {"http": 80, "https": 443}


def is_url(source: object) -> bool:
    """Whether an ingest argument (or a document's source) is an http(s) URL, not a path."""
    return isinstance(source, str) and source.lower().startswith(("http://", "https://"))


def normalise(url: str, base: str | None = None) -> str | None:
    """The one form of an http(s) URL (resolved against `base`): scheme and host in lower
    case, the default port left out, an empty path made `/`, without the fragment (the same
    page) and without user and password (a page's link never sends credentials). None for
    anything else (`mailto:`, `javascript:`, a malformed address)."""
    try:
        parts = urlsplit(urljoin(base, url.strip()) if base else url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if scheme not in SCHEMES or not host:
        return None
    if ":" in host:  # an IPv6 literal keeps its brackets
        host = f"[{host}]"
    netloc = host if port in (None, DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))


def host_of(url: str) -> str:
    """The host of a URL, in lower case, without port or brackets."""
    return (urlsplit(url).hostname or "").lower()


def origin(url: str) -> str:
    """`scheme://host[:port]` of a normalised URL: where its robots.txt lives."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"
