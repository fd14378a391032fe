"""Ingestion: files and websites -> documents -> chunks -> embeddings -> a validated snapshot
-> alias.

A build never touches the active snapshot: it writes a new snapshot beside it under a
per-snapshot build lock, validates it, records it `complete`, and only then switches the alias.
A crash at any point leaves the previous snapshot active and serving; the half-built one stays
`building` (its lock released by the kernel) or `failed`, and the next ingest rebuilds it.

What a build reads is a `SourceSet` (the files, folders and websites given, the documents
uploaded to the home: `citadel.ingest.sources`), recorded in its manifest with the changes
since the snapshot that was active, so that adding or removing one document
(`citadel.ingest.managed`) can rebuild from the rest. One change of the sources (an ingest, a
sync round, a document change) runs at a time (`change_lock`).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from citadel.config import Settings
from citadel.ingest.analysis import analyse_chunks
from citadel.ingest.chunking import ChunkingParams, DocumentTooLarge, chunk_document
from citadel.ingest.embedding_cache import EmbeddingCache, embed_cached
from citadel.ingest.loaders import Skipped
from citadel.ingest.operator_metadata import read_examples, rule_problems
from citadel.ingest.sources import load_sources, source_set
from citadel.knowledge.build_lock import build_lock, builder_identity, change_lock
from citadel.knowledge.changes import Changes, document_changes
from citadel.knowledge.snapshots import (
    Catalog,
    Fingerprint,
    Manifest,
    SnapshotError,
    build_manifest,
    fingerprint,
)
from citadel.knowledge.source_set import SourceSet
from citadel.records import Chunk, Document
from citadel.retrieval.backends import Backend, get_backend
from citadel.retrieval.backends.readiness import alias_mismatch
from citadel.retrieval.embedders import Embedder, get_embedder
from citadel.supersedes import retired_documents
from citadel.text.analysis import Analyser

EMBED_BATCH = 256
# The points where `fault` is called, in order; a crash may happen before any of them.
STAGES = ("load", "chunk", "embed", "analyse", "write", "manifest", "validate", "complete",
          "activate")


class IngestError(RuntimeError):
    def __init__(self, message: str, skipped: Sequence[Skipped] = ()) -> None:
        super().__init__(message)
        self.skipped = tuple(skipped)


@dataclass(frozen=True)
class IngestReport:
    snapshot_id: str
    documents: int
    chunks: int
    skipped: tuple[Skipped, ...]
    reused: bool
    activated: bool
    seconds: float
    embedded: int = 0
    stage_seconds: dict[str, float] = field(default_factory=dict)
    cached: int = 0
    # (chunk id, reason) of every chunk flagged by injection screening: stored, but never
    # retrieved (`Chunk.retrievable`), so never in an answer's context.
    flagged: tuple[tuple[str, str], ...] = ()
    # (document id, its successor) of every document retired by another: never retrieved.
    retired: tuple[tuple[str, str], ...] = ()
    # (path, fields) of Markdown files whose front matter names authority, supersedes or
    # tenant: only citadel-sources.toml sets them, so they were ignored (loaders).
    ignored_front_matter: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # The documents added, changed and removed since the snapshot active before.
    changes: Changes = Changes()


def index_text(chunk: Chunk) -> str:
    """What the dense and lexical indexes see: the chunk with its title and section."""
    heading = chunk.title if chunk.section == chunk.title else f"{chunk.title} — {chunk.section}"
    return f"{heading}\n{chunk.content}"


def ingest(paths: Sequence[Path | str], settings: Settings, **options: Any) -> IngestReport:
    """Build (or reuse) the snapshot for these files, folders and websites (http(s) URLs,
    `citadel.ingest.sources`), with the documents uploaded to this home
    (`citadel.ingest.managed`), and make it active. `options` are `build`'s; `on_wait` is
    also told who holds the change lock when another ingest, sync round or document change
    is running (this one waits for it)."""
    with change_lock(settings.home, on_wait=options.get("on_wait")):
        previous = Catalog(settings.home).active_manifest()
        sources = source_set(paths, previous.sources if previous else None)
        return build(sources, settings, previous=previous, **options)


def build(
    sources: SourceSet,
    settings: Settings,
    *,
    previous: Manifest | None,
    embedder: Embedder | None = None,
    backend: Backend | None = None,
    progress: bool = True,
    activate: bool = True,
    fault: Callable[[str], None] | None = None,
    cache: EmbeddingCache | None = None,
    on_wait: Callable[[str], None] | None = None,
    analyser: Analyser | None = None,
) -> IngestReport:
    """`ingest`'s stages, for a whole source set. The caller holds `change_lock` and read
    `previous`, the manifest of the snapshot active before (None: nothing was).

    `fault` is called with each stage name (`STAGES`) before the stage runs; tests use it to
    inject a crash between stages. `cache` defaults to `<home>/cache/embeddings.sqlite`.
    `on_wait` is told who holds the build lock when another ingest is building the same
    snapshot. `analyser` (default: a new `Analyser`) analyses every chunk of a new build.
    """
    started = time.perf_counter()
    marks: dict[str, float] = {}

    def stage(name: str) -> None:
        marks[name] = time.perf_counter()
        if fault is not None:
            fault(name)

    stage("load")
    corpus = load_sources(sources, settings, progress)
    if not corpus.documents:
        raise IngestError("nothing could be ingested", corpus.skipped)
    # The page's example questions, kept in the fingerprint.
    examples = read_examples([Path(p) for p in sources.paths])
    embedder = embedder or get_embedder(settings.embedder)
    analyser = analyser or Analyser()
    backend = backend or get_backend(settings)
    catalog = Catalog(settings.home)
    params = ChunkingParams(settings.chunk_size, settings.chunk_overlap,
                            settings.max_sections_per_document,
                            settings.max_chunks_per_document)

    stage("chunk")
    chunked = chunk_corpus(corpus.documents, params)
    documents, chunks = chunked.documents, list(chunked.chunks)
    skipped = corpus.skipped + chunked.refused
    if not chunks:
        raise IngestError("the files contain no text to index", skipped)
    problems = rule_problems(documents, corpus.unmatched_sources)
    if problems:
        raise IngestError("operator rules that name no document: " + "; ".join(problems),
                          skipped)
    fp = fingerprint(list(documents), embedder, params, backend.lexical_semantics,
                     analyser.identity(), backend.dense_index(len(chunks)), examples)
    snapshot_id = fp.snapshot_id
    changes = document_changes(previous.documents if previous else None, documents,
                               since=previous.snapshot_id if previous else None)

    embedded = cached = 0
    reused = _reusable(catalog, backend, snapshot_id)
    if not reused:
        with build_lock(settings.home, snapshot_id, on_wait=on_wait):
            # Another ingest may have finished this very snapshot while we waited.
            reused = _reusable(catalog, backend, snapshot_id)
            if not reused:
                embedded, cached = _build(
                    snapshot_id, fp, documents, chunks, settings, embedder, analyser,
                    backend, catalog, cache or EmbeddingCache.for_home(settings.home),
                    progress, stage, Recorded(previous, changes, sources),
                )
    if reused:
        catalog.record_sources(snapshot_id, sources)
    stage("activate")
    activated = _activate(catalog, snapshot_id, backend) if activate else False
    marks["end"] = time.perf_counter()
    names = list(marks)
    stage_seconds = {a: round(marks[b] - marks[a], 4) for a, b in zip(names, names[1:],
                                                                       strict=False)}
    return IngestReport(snapshot_id, len(documents), len(chunks), skipped,
                        reused=reused, activated=activated,
                        seconds=time.perf_counter() - started, embedded=embedded,
                        stage_seconds=stage_seconds, cached=cached,
                        flagged=tuple((c.chunk_id, c.suspicious_reason or "")
                                      for c in chunks if c.suspicious),
                        retired=tuple(sorted(chunked.retired.items())),
                        ignored_front_matter=corpus.ignored_front_matter, changes=changes)


@dataclass(frozen=True)
class Recorded:
    """What a new manifest records besides the build: the manifest active before (whose
    documents' `updated_at` carry over), the changes since it, and the sources read."""

    previous: Manifest | None
    changes: Changes
    sources: SourceSet


def _reusable(catalog: Catalog, backend: Backend, snapshot_id: str) -> bool:
    existing = catalog.get(snapshot_id)
    if existing is None or existing.state != "complete":
        return False
    if not backend.has_snapshot(snapshot_id):
        # Never repaired silently: a complete snapshot is immutable.
        raise SnapshotError(
            f"snapshot {snapshot_id} is recorded complete but its data is missing; "
            f"delete it (`citadel kb delete {snapshot_id}`) and ingest again"
        )
    return True


def _build(
    snapshot_id: str,
    fp: Fingerprint,
    documents: Sequence[Document],
    chunks: Sequence[Chunk],
    settings: Settings,
    embedder: Embedder,
    analyser: Analyser,
    backend: Backend,
    catalog: Catalog,
    cache: EmbeddingCache,
    progress: bool,
    stage: Callable[[str], None],
    recorded: Recorded,
) -> tuple[int, int]:
    """Build, validate and complete one snapshot; on any failure record it `failed`."""
    catalog.begin(snapshot_id, backend.name, fp, builder=builder_identity())
    try:
        stage("embed")
        texts = [index_text(c) for c in chunks]
        vectors, embedded = embed_cached(embedder, texts, cache, progress)
        stage("analyse")
        chunks, _ = analyse_chunks(chunks, analyser, progress, cache)
        stage("write")
        backend.write_snapshot(snapshot_id, documents, chunks, vectors, texts)
        stage("manifest")
        info = catalog.get(snapshot_id)
        manifest = build_manifest(
            snapshot_id, backend.name, fp, documents, len(chunks),
            created_at=info.created_at if info else "",
            build={"builder": builder_identity(), "embedded": embedded,
                   "cached": len(chunks) - embedded},
            previous=recorded.previous, changes=recorded.changes, sources=recorded.sources,
        )
        catalog.write_manifest(manifest)
        stage("validate")
        written = catalog.read_manifest(snapshot_id)
        if written is None:
            raise SnapshotError(f"manifest of {snapshot_id} vanished after writing")
        validate_snapshot(backend, snapshot_id, documents, chunks, embedder, settings,
                          vectors=vectors, manifest=written)
        stage("complete")
        catalog.complete(snapshot_id, len(documents), len(chunks))
    except BaseException as exc:
        catalog.fail(snapshot_id, f"{type(exc).__name__}: {exc}")
        raise
    return embedded, len(chunks) - embedded


@dataclass(frozen=True)
class ChunkedCorpus:
    documents: tuple[Document, ...]
    chunks: tuple[Chunk, ...]
    refused: tuple[Skipped, ...]
    retired: dict[str, str] = field(default_factory=dict)  # retired document -> successor


def chunk_corpus(documents: Sequence[Document], params: ChunkingParams) -> ChunkedCorpus:
    """Chunk every document; one over a per-document bound (`DocumentTooLarge`) is left out
    with its reason, never a crash and never half-indexed. The chunks of a document that
    another one retires (`citadel.supersedes.retired_documents`) carry `retired_by`."""
    kept: list[Document] = []
    chunks: list[Chunk] = []
    refused: list[Skipped] = []
    for doc in documents:
        try:
            doc_chunks = chunk_document(doc, params)
        except DocumentTooLarge as exc:
            refused.append(Skipped(doc.source, str(exc)))
            continue
        for chunk in doc_chunks:
            if doc.text[chunk.start : chunk.end] != chunk.content:
                raise IngestError(f"offsets do not round-trip for {chunk.chunk_id}")
        kept.append(doc)
        chunks.extend(doc_chunks)
    retired = retired_documents(kept)
    if retired:  # a property of the snapshot: never retrieved while it is served
        chunks = [c.model_copy(update={"retired_by": retired[c.document_id]})
                  if c.document_id in retired else c for c in chunks]
    return ChunkedCorpus(tuple(kept), tuple(chunks), tuple(refused), retired)


def chunk_documents(documents: Sequence[Document], params: ChunkingParams) -> list[Chunk]:
    """Every chunk of these documents; a document over a bound is an `IngestError`."""
    chunked = chunk_corpus(documents, params)
    if chunked.refused:
        raise IngestError(f"{chunked.refused[0].path}: {chunked.refused[0].reason}",
                          chunked.refused)
    return list(chunked.chunks)


def embed_all(embedder: Embedder, texts: list[str], progress: bool) -> np.ndarray:
    """Embed every text, no cache (see `citadel.ingest.embedding_cache.embed_cached`)."""
    out = np.zeros((len(texts), embedder.dimension), dtype=np.float32)
    with tqdm(total=len(texts), desc="embedding", unit="chunk", disable=not progress,
              file=None) as bar:
        for i in range(0, len(texts), EMBED_BATCH):
            batch = texts[i : i + EMBED_BATCH]
            out[i : i + len(batch)] = embedder.embed(batch)
            bar.update(len(batch))
    return out


SAMPLE_QUERIES = 5


def validate_snapshot(
    backend: Backend,
    snapshot_id: str,
    documents: Sequence[Document],
    chunks: Sequence[Chunk],
    embedder: Embedder,
    settings: Settings,
    *,
    vectors: np.ndarray | None = None,
    manifest: Manifest | None = None,
) -> None:
    """Refuse to complete a snapshot whose indexes disagree with what was built.

    Checks: counts in every index equal the build (and the manifest, when given); every
    stored chunk and document round-trips (content, offsets, content hash); a sample of
    queries returns results, and each sampled chunk's vector finds it. With `vectors` the
    sample queries reuse the built vectors instead of embedding again.
    """
    expected = {"documents": len(documents), "chunks": len(chunks),
                "dense": len(chunks), "lexical": len(chunks)}
    if manifest is not None and (
        manifest.snapshot_id != snapshot_id
        or Fingerprint.model_validate(manifest.fingerprint).snapshot_id != snapshot_id
        or manifest.counts != expected
    ):
        raise SnapshotError(
            f"manifest of {snapshot_id} (id {manifest.snapshot_id}, counts {manifest.counts}) "
            f"does not match the build {expected}"
        )
    index = backend.open(snapshot_id, settings.dense_weight, settings.candidates)
    try:
        counts = index.count()
        if counts != expected:
            raise SnapshotError(f"index counts {counts} do not match the build {expected}")
        # Rows, not chunks, per document: `chunks` may parse each one on access
        # (`AnalysedChunks`), and only one document's chunks are held at a time.
        by_document: dict[str, list[int]] = {}
        for row, chunk in enumerate(chunks):
            by_document.setdefault(chunk.document_id, []).append(row)
        for doc in documents:
            stored_doc = index.get_document(doc.document_id)
            if stored_doc != doc:
                raise SnapshotError(f"stored document {doc.document_id} does not round-trip")
            stored = index.chunks_of(doc.document_id)
            if stored != [chunks[row] for row in by_document.get(doc.document_id, [])]:
                raise SnapshotError(f"stored chunks of {doc.document_id} do not round-trip")
            for c in stored:
                if (doc.text[c.start : c.end] != c.content
                        or hashlib.sha256(c.content.encode()).hexdigest() != c.content_sha256):
                    raise SnapshotError(f"stored chunk {c.chunk_id} does not round-trip")
    finally:
        index.close()
    # Sample queries, ranked by the dense side alone: a chunk's own vector must find it (or
    # an identical twin), which proves vectors and chunks are aligned row for row.
    index = backend.open(snapshot_id, 1.0, settings.candidates)
    try:
        # Flagged and retired chunks are never retrieved: the sample is of the others.
        rows = [row for row, chunk in enumerate(chunks) if chunk.retrievable]
        step = max(1, len(rows) // SAMPLE_QUERIES)
        for row in rows[::step][:SAMPLE_QUERIES]:
            chunk = chunks[row]
            query = (vectors[row] if vectors is not None
                     else embedder.embed_query(index_text(chunk)))
            # As its own tenant: without one, a search sees public chunks only.
            hits = index.search(chunk.content, query, settings.candidates, tenant=chunk.tenant)
            if not hits:
                raise SnapshotError(f"sample query for {chunk.chunk_id} returned nothing")
            if not any(h.chunk.content_sha256 == chunk.content_sha256 for h in hits):
                raise SnapshotError(f"sample query for {chunk.chunk_id} did not retrieve it")
    finally:
        index.close()


def _activate(catalog: Catalog, snapshot_id: str, backend: Backend) -> bool:
    if catalog.alias() == snapshot_id and alias_mismatch(backend, snapshot_id) is None:
        return False
    catalog.switch(snapshot_id, mirror=backend.activate)
    return True
