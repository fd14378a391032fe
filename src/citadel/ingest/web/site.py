"""A website to ingest: where the crawl starts and what is in scope.

Given on the command line (`citadel ingest https://help.example.com/`: its host, no path
rules, the configured bounds) or as a `[[websites]]` table of `citadel-sources.toml`:

    [[websites]]
    url = "https://help.example.com/"        # a page to crawl from, or a sitemap.xml
    allowed_hosts = ["help.example.com", "docs.example.com"]   # default: the url's host
    include = ["/help/*"]                    # path globs; default: every path
    exclude = ["/help/archive/*"]
    max_pages = 200                          # default: crawl_max_pages
    max_depth = 4                            # default: crawl_max_depth

The start URL is always fetched (its links lead to the included pages); any other URL is
fetched only when its host is allowed, its path matches an `include` glob (when there are
any) and no `exclude` glob.
"""

from __future__ import annotations

import fnmatch
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from citadel.ingest.web.urls import host_of, normalise


class Website(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str
    allowed_hosts: tuple[str, ...] = ()
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    max_pages: int | None = Field(default=None, ge=1, le=1_000_000)
    max_depth: int | None = Field(default=None, ge=0, le=100)

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if urlsplit(value.strip()).username is not None:
            raise ValueError("a URL with a user name or password: Citadel fetches public "
                             "pages and sends no credentials")
        url = normalise(value)
        if url is None:
            raise ValueError(f"{value!r} is not an http(s) URL")
        return url

    @field_validator("allowed_hosts")
    @classmethod
    def _hosts(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(h.strip().lower().strip("[]") for h in value if h.strip())

    @field_validator("include", "exclude")
    @classmethod
    def _paths(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for glob in value:
            if not glob.startswith(("/", "*")):
                raise ValueError(f"{glob!r} is not a path glob (one starts with '/', e.g. "
                                 "'/help/*')")
        return value

    @property
    def hosts(self) -> frozenset[str]:
        return frozenset(self.allowed_hosts or (host_of(self.url),))

    def allows_host(self, url: str) -> bool:
        """Whether `url` is on an allowed host (redirects may go there)."""
        return host_of(url) in self.hosts

    def in_scope(self, url: str) -> bool:
        """Whether the crawl may fetch `url`: an allowed host, an included path."""
        if not self.allows_host(url):
            return False
        path = urlsplit(url).path or "/"
        if self.include and not any(fnmatch.fnmatchcase(path, g) for g in self.include):
            return False
        return not any(fnmatch.fnmatchcase(path, g) for g in self.exclude)
