"""A source set's documents: what one build reads (`citadel.knowledge.source_set.SourceSet`).

The files and folders given to `citadel ingest` are loaded as always (`load_corpus`), less the
documents an operator removed from them; then each uploaded document is read from the managed
folder (`<home>/documents/<sha256><suffix>`) under the name it was uploaded as, with the
metadata the admin set. An upload replaces a document of the folders with the same id: it is
that document's new version.
"""

from __future__ import annotations

from pathlib import Path

from citadel.config import Settings
from citadel.ingest.loaders import (
    LoadedCorpus,
    LoadError,
    Skipped,
    load_corpus,
    password_for,
    read_file,
)
from citadel.ingest.operator_metadata import SourceMetadata, apply_metadata
from citadel.knowledge.source_set import ManagedDocument, SourceSet
from citadel.records import Document

# Why an upload whose front matter names a tenant is refused when the upload sets none (as
# `loaders.TENANT_CLAIM` for a file in a folder): ignoring it would show everyone a private
# document.
UPLOAD_TENANT_CLAIM = ("its front matter names a tenant, which only the admin who uploads it "
                       "sets: upload it with a tenant (or without that front-matter field)")


def load_sources(sources: SourceSet, settings: Settings) -> LoadedCorpus:
    """Every document of `sources`; a file that cannot be read is `skipped` with its reason
    (an uploaded one too: the ingest report names it, and `changes` lists it as removed)."""
    paths = [Path(p) for p in sources.paths]
    passwords = settings.pdf_password_map()
    corpus = (load_corpus(paths, settings.max_file_bytes, passwords) if paths
              else LoadedCorpus((), ()))
    replaced = set(sources.excluded) | sources.managed_ids()
    documents = [d for d in corpus.documents if d.document_id not in replaced]
    skipped = list(corpus.skipped)
    ignored = list(corpus.ignored_front_matter)
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
