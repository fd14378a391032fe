"""Sources in one place: what one build reads (a `citadel.knowledge.source_set.SourceSet`), and
its documents.

An ingest argument is a path (a file or a folder) or an http(s) URL: a website, given by a
page to crawl from or by its sitemap (`source_set`). A folder's citadel-sources.toml may name
websites too (`[[websites]]`, `citadel.ingest.web.site`), so that `citadel ingest kb/` builds
from the folder and the sites it names. Its `[sources]` entries keyed by a URL or a URL glob
set the metadata of those pages (and of sites given beside the folder), as path entries do
for files.

The documents of the files, folders and websites are read as always, less the ones an
operator removed (`SourceSet.excluded`); then each uploaded document is read from the managed
folder (`<home>/documents/<sha256><suffix>`) under the name it was uploaded as, with the
metadata the admin set. An upload replaces a document of the folders or websites with the
same id: it is that document's new version.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from citadel.config import ConfigError, Settings
from citadel.ingest.loaders import (
    DocumentIdCollision,
    LoadedCorpus,
    LoadError,
    Skipped,
    load_corpus,
    password_for,
    read_file,
)
from citadel.ingest.operator_metadata import (
    SOURCES_FILE,
    SourceMetadata,
    apply_metadata,
    matches,
    read_sources_file,
    read_websites,
)
from citadel.ingest.web.site import Website
from citadel.ingest.web.urls import host_of, is_url
from citadel.knowledge.source_set import ManagedDocument, SourceSet
from citadel.records import Document

if TYPE_CHECKING:
    from citadel.ingest.web.fetch import Fetcher

# Why an upload whose front matter names a tenant is refused when the upload sets none (as
# `loaders.TENANT_CLAIM` for a file in a folder): ignoring it would show everyone a private
# document.
UPLOAD_TENANT_CLAIM = ("its front matter names a tenant, which only the admin who uploads it "
                       "sets: upload it with a tenant (or without that front-matter field)")


def source_set(arguments: Sequence[Path | str], previous: SourceSet | None = None) -> SourceSet:
    """What `citadel ingest ARGUMENTS` builds from: its files and folders, its websites (the
    http(s) URLs among them) and the documents uploaded before `previous` (the operator names
    the rest again, so nothing of them stays excluded)."""
    return SourceSet.given([Path(a) for a in arguments if not is_url(a)],
                           [str(a) for a in arguments if is_url(a)], previous)


def load_sources(sources: SourceSet, settings: Settings, progress: bool = False,
                 fetcher: Fetcher | None = None) -> LoadedCorpus:
    """Every document of `sources`, with what was skipped and why: a file or page that cannot
    be read is `skipped` with its reason (an uploaded one too: the ingest report names it,
    and `changes` lists it as removed)."""
    corpus = _files_and_websites(sources, settings, progress, fetcher)
    replaced = set(sources.excluded) | sources.managed_ids()
    documents = [d for d in corpus.documents if d.document_id not in replaced]
    skipped = list(corpus.skipped)
    ignored = list(corpus.ignored_front_matter)
    passwords = settings.pdf_password_map()
    for managed in sources.managed:
        try:
            loaded = read_file(managed.path(settings.home), managed.name,
                               settings.max_file_bytes, password_for(passwords, managed.name))
            documents.append(with_metadata(loaded.document, loaded.claims, managed))
        except LoadError as exc:
            skipped.append(Skipped(managed.name, str(exc)))
            continue
        ignored.extend([(managed.name, loaded.claims)] if loaded.claims else [])
    return LoadedCorpus(tuple(documents), tuple(skipped), tuple(ignored),
                        corpus.unmatched_sources)


def with_metadata(document: Document, claims: tuple[str, ...],
                  managed: ManagedDocument) -> Document:
    """An uploaded document with the admin's metadata in place of its own. LoadError when its
    front matter names a tenant and the upload set none (`UPLOAD_TENANT_CLAIM`)."""
    meta = SourceMetadata(authority=managed.authority, tenant=managed.tenant,
                          supersedes=managed.supersedes)
    document = apply_metadata(document, meta)
    if "tenant" in claims and document.tenant is None:
        raise LoadError(UPLOAD_TENANT_CLAIM)
    return document


class WebsiteUnreadable(ConfigError):
    """No page of a website could be read: its pages would silently leave the snapshot."""


def _files_and_websites(sources: SourceSet, settings: Settings, progress: bool,
                        fetcher: Fetcher | None) -> LoadedCorpus:
    """The documents of the files, folders and websites of `sources` (and of the websites
    the folders' citadel-sources.toml names)."""
    paths = [Path(p) for p in sources.paths]
    files = load_corpus(paths, settings.max_file_bytes, settings.pdf_password_map())
    folders = [p for p in paths if p.is_dir()]
    sites = [_website(url) for url in sources.websites]
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
    read_hosts = {host_of(doc.source) for doc in web.documents}
    # A site of which no page could be read (down, blocked, moved) would leave the new
    # snapshot without its pages, and a sync would serve that: nothing is built instead.
    unread = [site.url for site in sites if host_of(site.url) not in read_hosts]
    if unread:
        reasons = "; ".join(f"{skip.path}: {skip.reason}" for skip in web.skipped[:3])
        raise WebsiteUnreadable(
            f"no page of {', '.join(unread)} could be read ({reasons or 'nothing found'}): "
            "nothing was built, and the snapshot served is unchanged")
    # A URL entry that names no page of a site that was read is a typo, as a path entry
    # naming no file is.
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
