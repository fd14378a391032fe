"""Managed documents: files an admin adds (`citadel docs add`, `POST /v1/documents`) or
removes (`citadel docs remove`, `DELETE /v1/documents/{id}`), each change a new snapshot.

Snapshots stay immutable: a change builds a complete new snapshot from the active one's
sources (`SourceSet`, in its manifest) plus or minus the document, through the normal
pipeline (`build`: validated before the alias moves; a failure leaves the active snapshot
serving), with the embedding cache, so only the new document's chunks are embedded, and the
fetch cache, so the websites among the sources are only asked whether their pages changed.

An uploaded file is kept in `<home>/documents/` under the SHA-256 of its bytes and the
suffix of its format: the name a client sent is never used as a path. That name, sanitized
(`safe_name`), is the document's source, and its id comes from it as a file's does from its
path; an upload whose id is an existing document's replaces it (a new version). Files are
checked before anything is built: a type the loaders do not read, a file over
`max_file_bytes`, and a file they cannot read are refused with the reason.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import unicodedata
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from citadel.config import Settings
from citadel.ingest.embedding_cache import EmbeddingCache
from citadel.ingest.loaders import FORMATS, LoadError, document_id, password_for, read_file
from citadel.ingest.pipeline import IngestReport, build
from citadel.ingest.sources import with_metadata
from citadel.knowledge.build_lock import LockBusy, change_lock
from citadel.knowledge.snapshots import Catalog, Manifest
from citadel.knowledge.source_set import MANAGED_FOLDER, ManagedDocument, SourceSet
from citadel.retrieval.backends import Backend
from citadel.retrieval.embedders import Embedder
from citadel.text.analysis import Analyser

MAX_NAME_CHARS = 200
MAX_FILES = 100  # per change: a bound on one request's work, not on the knowledge base


class DocumentChangeError(ValueError):
    """A document change refused before anything was built; the message says why."""


class UnsupportedType(DocumentChangeError):
    """A file of a type the loaders do not read."""


class TooLarge(DocumentChangeError):
    """A file over `max_file_bytes`."""


class InvalidDocument(DocumentChangeError):
    """A file the loaders cannot read, or metadata that cannot be used."""


class UnknownDocument(DocumentChangeError):
    """No document with that id in the active snapshot."""


class ChangeBusy(DocumentChangeError):
    """Another ingest or document change holds the change lock."""


class SourcesUnknown(DocumentChangeError):
    """The active snapshot does not record what it was built from."""


@dataclass(frozen=True)
class Upload:
    name: str  # as the client sent it: never used as a path
    data: bytes


@dataclass(frozen=True)
class Change:
    """A change's new snapshot (`report.snapshot_id`, `report.changes`) and the ids of the
    documents it uploaded."""

    report: IngestReport
    documents: tuple[str, ...] = ()


@dataclass(frozen=True)
class Builders:
    """What builds the new snapshot; None: from the settings (a server passes its loaded
    embedder and analyser, so a change does not load the models again)."""

    embedder: Embedder | None = None
    analyser: Analyser | None = None
    backend: Backend | None = None
    cache: EmbeddingCache | None = None
    progress: bool = False


def safe_name(name: str) -> str:
    """A client's file name made a source name: its last component (after `/` or `\\`),
    without control or format characters (bidirectional overrides), surrounding spaces or
    leading dots, at most MAX_NAME_CHARS with its suffix kept. "" when nothing is left."""
    last = name.replace("\\", "/").rsplit("/", 1)[-1]
    kept = "".join(c for c in last if unicodedata.category(c)[0] != "C")
    kept = kept.strip().lstrip(".").strip()
    stem, suffix = os.path.splitext(kept)
    if len(kept) > MAX_NAME_CHARS:
        kept = stem[: MAX_NAME_CHARS - len(suffix)].rstrip() + suffix
    return kept


def add_documents(settings: Settings, uploads: Sequence[Upload], *,
                  authority: float | None = None, tenant: str | None = None,
                  supersedes: str | None = None, builders: Builders = Builders()) -> Change:
    """Store the uploads and build the snapshot of the active one's sources with them (an
    upload with an existing document's id replaces it). Refused (DocumentChangeError) before
    anything is built when a file or the metadata cannot be used."""
    if not uploads:
        raise InvalidDocument("no file to add")
    if len(uploads) > MAX_FILES:
        raise InvalidDocument(f"{len(uploads)} files in one change; at most {MAX_FILES}")
    with _changing(settings.home):
        previous = Catalog(settings.home).active_manifest()
        base = _sources_of(previous)
        stored: dict[str, ManagedDocument] = {}
        for upload in uploads:
            managed = store(settings, upload, authority=authority, tenant=tenant,
                            supersedes=supersedes)
            first = stored.setdefault(managed.document_id, managed)
            if first is not managed:
                raise InvalidDocument(
                    f"{first.name} and {managed.name} would both have the document id "
                    f"{managed.document_id!r}: rename one, or add them one at a time")
        kept = tuple(m for m in base.managed if m.document_id not in stored)
        sources = base.model_copy(update={"managed": kept + tuple(stored.values())})
        report = _build(settings, sources, previous, builders)
    return Change(report, tuple(stored))


def remove_document(settings: Settings, document_id: str, *,
                    builders: Builders = Builders()) -> Change:
    """Build the snapshot of the active one's sources without `document_id`: an upload is
    dropped, a document of an ingested folder or website excluded (the file or page itself
    is left alone; a later `citadel ingest` or sync round of that folder or site brings it
    back)."""
    with _changing(settings.home):
        previous = Catalog(settings.home).active_manifest()
        ids = {d.document_id for d in previous.documents} if previous is not None else set()
        if document_id not in ids:
            where = f"snapshot {previous.snapshot_id}" if previous else "the knowledge base"
            raise UnknownDocument(f"no document {document_id!r} in {where} (see `citadel docs "
                                  "list` or GET /v1/documents)")
        if ids == {document_id}:
            raise InvalidDocument(f"{document_id!r} is the only document: a knowledge base "
                                  "needs at least one (add another first)")
        base = _sources_of(previous)
        sources = base.model_copy(update={
            "managed": tuple(m for m in base.managed if m.document_id != document_id),
            "excluded": tuple(sorted({*base.excluded, document_id})),
        })
        report = _build(settings, sources, previous, builders)
    return Change(report)


def store(settings: Settings, upload: Upload, *, authority: float | None = None,
          tenant: str | None = None, supersedes: str | None = None) -> ManagedDocument:
    """Check one upload and keep it in the managed folder under its content hash."""
    name = safe_name(upload.name)
    suffix = Path(name).suffix.lower()
    if suffix not in FORMATS:
        raise UnsupportedType(
            f"{name or 'a file without a name'!r}: unsupported file type "
            f"{suffix or '(none)'!r}; the loaders read {', '.join(sorted(FORMATS))}")
    if len(upload.data) > settings.max_file_bytes:
        raise TooLarge(f"{name!r} is {len(upload.data):,} bytes, over the limit of "
                       f"{settings.max_file_bytes:,} (max_file_bytes)")
    try:
        managed = ManagedDocument(
            document_id=document_id(name), name=name,
            sha256=hashlib.sha256(upload.data).hexdigest(), suffix=suffix,
            added_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            authority=authority, tenant=tenant or None, supersedes=supersedes or None)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
                             for e in exc.errors())
        raise InvalidDocument(f"invalid metadata: {problems}") from None
    folder = settings.home / MANAGED_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    # Checked under a private name, then renamed: the folder never holds a file half
    # written or one the loaders refuse.
    staging = folder / f".upload-{uuid.uuid4().hex}{suffix}"
    try:
        staging.write_bytes(upload.data)
        loaded = read_file(staging, name, settings.max_file_bytes,
                           password_for(settings.pdf_password_map(), name))
        with_metadata(loaded.document, loaded.claims, managed)
        os.replace(staging, managed.path(settings.home))
    except LoadError as exc:
        raise InvalidDocument(f"{name!r} cannot be read: {exc}") from None
    finally:
        staging.unlink(missing_ok=True)
    return managed


@contextmanager
def _changing(home: Path) -> Iterator[None]:
    try:
        with change_lock(home, wait=False):
            yield
    except LockBusy as exc:
        raise ChangeBusy(f"{exc}; try again when it is done") from None


def _sources_of(previous: Manifest | None) -> SourceSet:
    if previous is None:
        return SourceSet()  # nothing ingested yet: the uploads are the knowledge base
    if previous.sources is None:
        raise SourcesUnknown(
            f"the active snapshot {previous.snapshot_id} was built before snapshots recorded "
            "their sources, so it cannot be rebuilt with a change: run `citadel ingest` "
            "with its files or folders once, then add or remove documents")
    return previous.sources


def _build(settings: Settings, sources: SourceSet, previous: Manifest | None,
           builders: Builders) -> IngestReport:
    try:
        return build(sources, settings, previous=previous, embedder=builders.embedder,
                     backend=builders.backend, analyser=builders.analyser,
                     cache=builders.cache, progress=builders.progress)
    except FileNotFoundError as exc:  # a folder the active snapshot was built from is gone
        raise SourcesUnknown(f"{exc}: the active snapshot was built from it; run `citadel "
                             "ingest` with its files or folders where they are now") from None
