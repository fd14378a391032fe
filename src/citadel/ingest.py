"""Ingestion: files -> documents -> chunks -> embeddings -> a validated snapshot -> alias."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tqdm import tqdm

from citadel.backends import Backend, get_backend
from citadel.backends.readiness import alias_mismatch
from citadel.chunking import ChunkingParams, chunk_document
from citadel.config import Settings
from citadel.embedders import Embedder, get_embedder
from citadel.loaders import Skipped, load_corpus
from citadel.records import Chunk, Document
from citadel.snapshots import Catalog, SnapshotError, fingerprint

EMBED_BATCH = 256


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


def index_text(chunk: Chunk) -> str:
    """What the dense and lexical indexes see: the chunk with its title and section."""
    heading = chunk.title if chunk.section == chunk.title else f"{chunk.title} — {chunk.section}"
    return f"{heading}\n{chunk.content}"


def ingest(
    paths: Sequence[Path],
    settings: Settings,
    *,
    embedder: Embedder | None = None,
    backend: Backend | None = None,
    progress: bool = True,
    activate: bool = True,
    fault: Callable[[str], None] | None = None,
) -> IngestReport:
    """Build (or reuse) the snapshot for these files and make it active.

    `fault` is called with each stage name before the stage runs; tests use it to inject
    a crash between stages.
    """
    started = time.perf_counter()
    stage_seconds: dict[str, float] = {}

    def stage(name: str) -> None:
        stage_seconds[name] = time.perf_counter()
        if fault is not None:
            fault(name)

    stage("load")
    corpus = load_corpus(paths, settings.max_file_bytes)
    if not corpus.documents:
        raise IngestError("nothing could be ingested", corpus.skipped)
    embedder = embedder or get_embedder(settings.embedder)
    backend = backend or get_backend(settings)
    catalog = Catalog(settings.home)
    params = ChunkingParams(settings.chunk_size, settings.chunk_overlap)

    stage("chunk")
    chunks = chunk_documents(corpus.documents, params)
    if not chunks:
        raise IngestError("the files contain no text to index", corpus.skipped)
    fp = fingerprint(list(corpus.documents), embedder, params, backend.lexical_semantics)
    snapshot_id = fp.snapshot_id

    existing = catalog.get(snapshot_id)
    if existing and existing.state == "complete" and backend.has_snapshot(snapshot_id):
        activated = _activate(catalog, snapshot_id, backend) if activate else False
        return IngestReport(snapshot_id, len(corpus.documents), len(chunks), corpus.skipped,
                            reused=True, activated=activated,
                            seconds=time.perf_counter() - started)

    catalog.begin(snapshot_id, backend.name, fp)
    try:
        stage("embed")
        texts = [index_text(c) for c in chunks]
        vectors = embed_all(embedder, texts, progress)
        stage("write")
        backend.write_snapshot(snapshot_id, corpus.documents, chunks, vectors, texts)
        stage("validate")
        validate_snapshot(backend, snapshot_id, corpus.documents, chunks, embedder, settings)
        stage("complete")
        catalog.complete(snapshot_id, len(corpus.documents), len(chunks))
    except BaseException as exc:
        catalog.fail(snapshot_id, f"{type(exc).__name__}: {exc}")
        raise
    activated = _activate(catalog, snapshot_id, backend) if activate else False
    return IngestReport(snapshot_id, len(corpus.documents), len(chunks), corpus.skipped,
                        reused=False, activated=activated, seconds=time.perf_counter() - started,
                        embedded=len(chunks), stage_seconds=stage_seconds)


def chunk_documents(documents: Sequence[Document], params: ChunkingParams) -> list[Chunk]:
    chunks: list[Chunk] = []
    for doc in documents:
        for chunk in chunk_document(doc, params):
            if doc.text[chunk.start : chunk.end] != chunk.content:
                raise IngestError(f"offsets do not round-trip for {chunk.chunk_id}")
            chunks.append(chunk)
    return chunks


def embed_all(embedder: Embedder, texts: list[str], progress: bool) -> np.ndarray:
    out = np.zeros((len(texts), embedder.dimension), dtype=np.float32)
    with tqdm(total=len(texts), desc="embedding", unit="chunk", disable=not progress,
              file=None) as bar:
        for i in range(0, len(texts), EMBED_BATCH):
            batch = texts[i : i + EMBED_BATCH]
            out[i : i + len(batch)] = embedder.embed(batch)
            bar.update(len(batch))
    return out


def validate_snapshot(
    backend: Backend,
    snapshot_id: str,
    documents: Sequence[Document],
    chunks: Sequence[Chunk],
    embedder: Embedder,
    settings: Settings,
) -> None:
    """Refuse to complete a snapshot whose indexes disagree with what was built."""
    index = backend.open(snapshot_id, settings.dense_weight, settings.candidates)
    try:
        counts = index.count()
        expected = {"documents": len(documents), "chunks": len(chunks),
                    "dense": len(chunks), "lexical": len(chunks)}
        if counts != expected:
            raise SnapshotError(f"index counts {counts} do not match the build {expected}")
        for chunk in chunks[:: max(1, len(chunks) // 5)][:5]:
            hits = index.search(chunk.content, embedder.embed_query(index_text(chunk)), 5)
            if not hits:
                raise SnapshotError(f"sample query for {chunk.chunk_id} returned nothing")
            stored = index.get_chunk(chunk.chunk_id)
            doc = index.get_document(chunk.document_id)
            if stored != chunk or doc is None or doc.text[chunk.start : chunk.end] != chunk.content:
                raise SnapshotError(f"stored chunk {chunk.chunk_id} does not round-trip")
    finally:
        index.close()


def _activate(catalog: Catalog, snapshot_id: str, backend: Backend) -> bool:
    if catalog.alias() == snapshot_id and alias_mismatch(backend, snapshot_id) is None:
        return False
    catalog.switch(snapshot_id, mirror=backend.activate)
    return True
