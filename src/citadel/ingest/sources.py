"""Sources in one place: the files, folders and websites one ingest reads.

An ingest argument is a path (a file or a folder) or an http(s) URL: a website, given by a
page to crawl from or by its sitemap. A folder's citadel-sources.toml may name websites too
(`[[websites]]`, `citadel.ingest.web.site`), so that `citadel ingest kb/` builds from the
folder and the sites it names. Its `[sources]` entries keyed by a URL or a URL glob set the
metadata of those pages (and of sites given beside the folder), as path entries do for files.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from citadel.config import ConfigError, Settings
from citadel.ingest.loaders import DocumentIdCollision, LoadedCorpus, load_corpus
from citadel.ingest.operator_metadata import (
    SOURCES_FILE,
    SourceMetadata,
    matches,
    read_sources_file,
    read_websites,
)
from citadel.ingest.web.site import Website
from citadel.ingest.web.urls import host_of, is_url

if TYPE_CHECKING:
    from citadel.ingest.web.fetch import Fetcher


def local_paths(sources: Sequence[Path | str]) -> list[Path]:
    """The files and folders among the ingest arguments."""
    return [Path(s) for s in sources if not is_url(s)]


def load_sources(sources: Sequence[Path | str], settings: Settings, progress: bool = False,
                 fetcher: Fetcher | None = None) -> LoadedCorpus:
    """Every document of these files, folders and websites (and the websites the folders'
    citadel-sources.toml names), with what was skipped and why."""
    paths = local_paths(sources)
    files = load_corpus(paths, settings.max_file_bytes, settings.pdf_password_map())
    folders = [p for p in paths if p.is_dir()]
    sites = [_website(str(s)) for s in sources if is_url(s)]
    sites += [site for folder in folders for site in read_websites(folder)]
    if not sites:
        return files
    from citadel.ingest.web.loading import load_websites  # httpx: only when a site is read

    rules: dict[str, SourceMetadata] = {}
    named_in: dict[str, Path] = {}
    for folder in folders:
        for key, meta in read_sources_file(folder).items():
            if is_url(key) and key not in rules:
                rules[key], named_in[key] = meta, folder / SOURCES_FILE
    web = load_websites(sites, settings, rules, progress, fetcher)
    owners = {doc.document_id: doc.source for doc in files.documents}
    for doc in web.documents:
        if doc.document_id in owners:
            raise DocumentIdCollision(
                f"{owners[doc.document_id]} and {doc.source} would both have the document id "
                f"{doc.document_id!r}: rename or move the file")
    # A URL entry that names no page of a site that was read is a typo, as a path entry
    # naming no file is; a site that could not be reached at all says nothing either way.
    read_hosts = {host_of(doc.source) for doc in web.documents}
    seen = [*web.attempted, *(doc.source for doc in web.documents)]
    unmatched = tuple(f"{named_in[key]}: [sources.{key!r}] matches no page of its websites"
                      for key in rules if host_of(key) in read_hosts
                      and not any(matches(key, url) for url in seen))
    return LoadedCorpus(files.documents + tuple(web.documents),
                        files.skipped + tuple(web.skipped),
                        files.ignored_front_matter + tuple(web.ignored_front_matter),
                        files.unmatched_sources + unmatched)


def _website(url: str) -> Website:
    try:
        return Website(url=url)
    except ValidationError as exc:
        raise ConfigError(f"{url}: {exc.errors()[0]['msg']}") from None
