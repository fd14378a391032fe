"""Qdrant: one collection per snapshot, an alias for the active one, hybrid RRF queries.

Each chunk is a point with an unnamed dense vector (cosine) and a named sparse vector
`lexical` holding BM25-style term weights computed by `citadel.retrieval.sparse` (the
collection's IDF modifier supplies IDF). Its payload is the chunk's fields, nothing else.
Documents (whose text citations' offsets point into) live in a vectorless companion
collection `<snapshot>-documents`. A query runs two prefetches (dense, sparse) fused by
reciprocal-rank fusion in the engine.

Server (`url=`), embedded on disk (`path=`) and in memory (`":memory:"`) differ only in how
the client is constructed. Queries name the snapshot's collection, never the alias: the
engine serves the snapshot the catalog validated, and the alias (mirrored on every catalog
switch) is what other Qdrant clients and readiness checks read.
"""

from __future__ import annotations

import math
import threading
import uuid
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from citadel.config import ConfigError
from citadel.records import Chunk, Document, RankedChunk
from citadel.retrieval import sparse
from citadel.retrieval.backends.base import (
    Backend,
    CountingSearchIndex,
    RetrievalError,
    SearchResult,
)
from citadel.retrieval.backends.lease import Lease
from citadel.retrieval.backends.payload import chunk_payload, read_chunk, read_document

if TYPE_CHECKING:
    from qdrant_client import QdrantClient

SPARSE = "lexical"
DOCUMENTS_SUFFIX = "-documents"
RRF_K = 60
# Qdrant's RRF gives 1/(k + rank0) per list, so a point first in both lists scores 2/k.
# Dividing by that puts retrieval_score in [0, 1] like the local backend's fused score, which
# matters because context ordering adds authority_weight x authority to it.
RRF_MAX = 2.0 / RRF_K
# Over-fetch a little so that malformed points skipped on the way still leave k chunks.
SPARE = 8
WRITE_BATCH = 256
PAYLOAD_INDEXES = ("chunk_id", "document_id", "tenant", "category", "retired_by")
# Point ids must be integers or UUIDs; a name-based UUID makes get_chunk a direct lookup.
_ID_NAMESPACE = uuid.UUID("6f1d3c1e-4a1b-5c58-9d0e-c17ade1c17ad")


def point_id(key: str) -> str:
    return str(uuid.uuid5(_ID_NAMESPACE, key))


def _client_class() -> type[QdrantClient]:
    try:
        from qdrant_client import QdrantClient
    except ImportError:
        raise ConfigError(
            "the qdrant backend needs qdrant-client: pip install 'citadel[qdrant]'"
        ) from None
    return QdrantClient


def _models() -> Any:
    from qdrant_client import models

    return models


class QdrantBackend(Backend):
    name = "qdrant"
    mirrors_alias = True
    lexical_semantics = sparse.SEMANTICS

    def __init__(
        self,
        *,
        url: str | None = None,
        path: str | Path | None = None,
        alias: str = "citadel-active",
        timeout: float = 5.0,
    ) -> None:
        if (url is None) == (path is None):
            raise ConfigError("the qdrant backend needs exactly one of qdrant_url, qdrant_path")
        self.url = url
        self.path = None if path is None else str(path)
        self.alias = alias
        self.timeout = timeout
        self.mode = "server" if url else "memory" if self.path == ":memory:" else "embedded"
        self.where = url or self.path or ""
        # Embedded storage admits one client per folder and process: let go when idle.
        self._lease: Lease[QdrantClient] = Lease(
            self._connect, lambda c: c.close(), keep_idle=self.mode != "embedded"
        )
        # Embedded mode is plain Python over dicts and SQLite: one call at a time.
        self._serial = threading.RLock() if self.mode != "server" else None

    def _connect(self) -> QdrantClient:
        client_class = _client_class()
        try:
            if self.url is not None:
                return client_class(url=self.url, timeout=max(1, math.ceil(self.timeout)),
                                    check_compatibility=False)
            if self.path == ":memory:":
                return client_class(location=":memory:")
            return client_class(path=self.path)
        except RuntimeError as exc:  # e.g. the folder is locked by another process
            raise RetrievalError(f"qdrant ({self.mode}) at {self.where}: {exc}") from exc

    @contextmanager
    def client(self) -> Iterator[QdrantClient]:
        """The shared client; any failure talking to Qdrant becomes a RetrievalError."""
        try:
            with self._lease.use() as client, self._serial or nullcontext():
                yield client
        except (RetrievalError, ConfigError):
            raise
        except Exception as exc:
            raise RetrievalError(
                f"qdrant ({self.mode}) at {self.where}: {type(exc).__name__}: {exc}"
            ) from exc

    def _alias_target(self, client: QdrantClient) -> str | None:
        for a in client.get_aliases().aliases:
            if a.alias_name == self.alias:
                return a.collection_name
        return None

    def engine_alias(self) -> str | None:
        with self.client() as client:
            return self._alias_target(client)

    def activate(self, snapshot_id: str) -> None:
        m = _models()
        with self.client() as client:
            if not self._complete(client, snapshot_id):
                raise RetrievalError(f"qdrant has no complete collection {snapshot_id}")
            ops: list[Any] = []
            if self._alias_target(client) is not None:
                ops.append(m.DeleteAliasOperation(delete_alias=m.DeleteAlias(alias_name=self.alias)))
            ops.append(m.CreateAliasOperation(create_alias=m.CreateAlias(
                collection_name=snapshot_id, alias_name=self.alias)))
            # One call: Qdrant applies the delete and the create atomically.
            client.update_collection_aliases(change_aliases_operations=ops)

    def _complete(self, client: QdrantClient, snapshot_id: str) -> bool:
        if not (client.collection_exists(snapshot_id)
                and client.collection_exists(snapshot_id + DOCUMENTS_SUFFIX)):
            return False
        meta = client.get_collection(snapshot_id).config.metadata or {}
        return bool((meta.get("citadel") or {}).get("complete"))

    def has_snapshot(self, snapshot_id: str) -> bool:
        with self.client() as client:
            return self._complete(client, snapshot_id)

    def write_snapshot(
        self,
        snapshot_id: str,
        documents: Sequence[Document],
        chunks: Sequence[Chunk],
        vectors: np.ndarray,
        index_texts: Sequence[str],
    ) -> None:
        if len(chunks) != len(vectors) or len(chunks) != len(index_texts):
            raise ValueError("chunks, vectors and index texts differ in length")
        m = _models()
        weights = sparse.document_vectors(index_texts)
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        docs_name = snapshot_id + DOCUMENTS_SUFFIX
        with self.client() as client:
            if snapshot_id in {a.collection_name for a in client.get_aliases().aliases}:
                # Served under some alias (another CITADEL_HOME sharing this server): never
                # rewritten. Its id is content-derived, so a complete one is this very build.
                if self._complete(client, snapshot_id):
                    return
                raise RetrievalError(f"refusing to rewrite {snapshot_id}: an alias points at it")
            for name in (snapshot_id, docs_name):  # an earlier failed build of the same id
                if client.collection_exists(name):
                    client.delete_collection(name)
            client.create_collection(docs_name, vectors_config={})
            client.create_collection(
                snapshot_id,
                vectors_config=m.VectorParams(size=int(vectors.shape[1]),
                                              distance=m.Distance.COSINE),
                sparse_vectors_config={SPARSE: m.SparseVectorParams(modifier=m.Modifier.IDF)},
                metadata={"citadel": {"snapshot_id": snapshot_id, "complete": False}},
            )
            with warnings.catch_warnings():  # embedded mode notes that it ignores them
                warnings.simplefilter("ignore")
                for field in PAYLOAD_INDEXES:
                    client.create_payload_index(snapshot_id, field, m.PayloadSchemaType.KEYWORD)
                client.create_payload_index(snapshot_id, "suspicious", m.PayloadSchemaType.BOOL)
            for i in range(0, len(documents), WRITE_BATCH):
                client.upsert(docs_name, [
                    m.PointStruct(id=point_id(d.document_id), vector={},
                                  payload=d.model_dump(mode="json"))
                    for d in documents[i : i + WRITE_BATCH]
                ])
            for i in range(0, len(chunks), WRITE_BATCH):
                client.upsert(snapshot_id, [
                    m.PointStruct(
                        id=point_id(c.chunk_id),
                        vector={"": vectors[j].tolist(),
                                SPARSE: m.SparseVector(indices=weights[j].indices,
                                                       values=weights[j].values)},
                        payload=chunk_payload(c),
                    )
                    for j, c in enumerate(chunks[i : i + WRITE_BATCH], start=i)
                ])
            # Written last: a collection without this mark is an unfinished build.
            client.update_collection(snapshot_id, metadata={"citadel": {
                "snapshot_id": snapshot_id, "complete": True,
                "documents": len(documents), "chunks": len(chunks)}})

    def delete_snapshot(self, snapshot_id: str) -> None:
        with self.client() as client:
            if snapshot_id in {a.collection_name for a in client.get_aliases().aliases}:
                raise RetrievalError(f"refusing to delete {snapshot_id}: an alias points at it")
            for name in (snapshot_id, snapshot_id + DOCUMENTS_SUFFIX):
                if client.collection_exists(name):
                    client.delete_collection(name)

    def open(self, snapshot_id: str, dense_weight: float, candidates: int) -> QdrantIndex:
        return QdrantIndex(self, snapshot_id, candidates)

    def close(self) -> None:
        self._lease.close()


def _filter(tenant: str | None, category: str | None) -> Any:
    m = _models()
    must: list[Any] = []
    # Public chunks (no tenant: empty, null or absent), plus the request's tenant's own; no
    # tenant means public chunks only.
    public = [m.FieldCondition(key="tenant", match=m.MatchValue(value="")),
              m.IsEmptyCondition(is_empty=m.PayloadField(key="tenant"))]
    own = [m.FieldCondition(key="tenant", match=m.MatchValue(value=tenant))] if tenant else []
    must.append(m.Filter(should=[*own, *public]))
    if category is not None:
        must.append(m.FieldCondition(key="category", match=m.MatchValue(value=category)))
    # Only retrievable chunks (`Chunk.retrievable`): flagged and retired ones take no place.
    must.append(m.IsEmptyCondition(is_empty=m.PayloadField(key="retired_by")))
    return m.Filter(must=must, must_not=[
        m.FieldCondition(key="suspicious", match=m.MatchValue(value=True))])


def _named(vectors: Any, name: str) -> Any:
    if isinstance(vectors, dict):
        return vectors.get(name)
    return vectors if name == "" else None


class QdrantIndex(CountingSearchIndex):
    backend = "qdrant"
    strategy = f"hybrid-rrf(k={RRF_K}; dense-cosine + sparse-bm25-idf)"

    def __init__(self, owner: QdrantBackend, snapshot_id: str, candidates: int) -> None:
        self.snapshot_id = snapshot_id
        self.candidates = candidates
        self._owner = owner
        self._docs = snapshot_id + DOCUMENTS_SUFFIX
        owner._lease.hold()  # keeps the client (and an embedded folder's lock) while open
        self._closed = False
        self._close_lock = threading.Lock()

    def search_result(
        self,
        text: str,
        vector: np.ndarray,
        k: int,
        *,
        tenant: str | None = None,
        category: str | None = None,
    ) -> SearchResult:
        m = _models()
        query = np.asarray(vector, dtype=np.float32)
        terms = sparse.query_vector(text)
        flt = _filter(tenant, category)
        prefetch = [m.Prefetch(query=query.tolist(), limit=self.candidates, filter=flt)]
        if terms.indices:
            prefetch.append(m.Prefetch(
                query=m.SparseVector(indices=terms.indices, values=terms.values),
                using=SPARSE, limit=self.candidates, filter=flt))
        with self._owner.client() as client:
            points = client.query_points(
                self.snapshot_id, prefetch=prefetch, query=m.RrfQuery(rrf=m.Rrf(k=RRF_K)),
                limit=k + SPARE, with_payload=True, with_vectors=True,
            ).points
        # Equal fused scores come back in storage order, which differs between an in-memory
        # and a reopened collection: break ties on the point id so every mode agrees.
        points = sorted(points, key=lambda p: (-p.score, str(p.id)))
        ranked: list[RankedChunk] = []
        skipped = 0
        for p in points:
            if len(ranked) >= k:
                break
            chunk = read_chunk(p.payload, f"qdrant:{self.snapshot_id}/{p.id}")
            if chunk is None:
                skipped += 1
                continue
            dense = _named(p.vector, "")
            lex = _named(p.vector, SPARSE)
            ranked.append(RankedChunk(
                chunk=chunk,
                retrieval_score=round(min(1.0, p.score / RRF_MAX), 6),
                # Exact cosine (Qdrant stores cosine vectors normalised), as the local backend.
                dense_score=None if dense is None else round(float(np.dot(dense, query)), 6),
                lexical_score=None if lex is None else _round(sparse.overlap_score(
                    terms, sparse.SparseVector(list(lex.indices), list(lex.values)))),
                rank=len(ranked) + 1,
            ))
        return SearchResult(ranked, malformed_skipped=skipped)

    def get_chunk(self, chunk_id: str) -> Chunk | None:
        with self._owner.client() as client:
            found = client.retrieve(self.snapshot_id, [point_id(chunk_id)], with_payload=True)
        if not found:
            return None
        chunk = read_chunk(found[0].payload, f"qdrant:{self.snapshot_id}/{found[0].id}")
        return chunk if chunk is not None and chunk.chunk_id == chunk_id else None

    def get_document(self, document_id: str) -> Document | None:
        with self._owner.client() as client:
            found = client.retrieve(self._docs, [point_id(document_id)], with_payload=True)
        if not found:
            return None
        doc = read_document(found[0].payload, f"qdrant:{self._docs}/{found[0].id}")
        return doc if doc is not None and doc.document_id == document_id else None

    def chunks_of(self, document_id: str) -> list[Chunk]:
        m = _models()
        flt = m.Filter(must=[m.FieldCondition(key="document_id",
                                              match=m.MatchValue(value=document_id))])
        out: list[Chunk] = []
        offset = None
        with self._owner.client() as client:
            while True:
                points, offset = client.scroll(self.snapshot_id, scroll_filter=flt, limit=256,
                                               offset=offset, with_payload=True)
                for p in points:
                    chunk = read_chunk(p.payload, f"qdrant:{self.snapshot_id}/{p.id}")
                    if chunk is not None and chunk.document_id == document_id:
                        out.append(chunk)
                if offset is None:
                    break
        return sorted(out, key=lambda c: (c.start, c.chunk_id))

    def count(self) -> dict[str, int]:
        m = _models()

        def with_vector(name: str) -> Any:
            return m.Filter(must=[m.HasVectorCondition(has_vector=name)])

        with self._owner.client() as client:
            return {
                "documents": client.count(self._docs, exact=True).count,
                "chunks": client.count(self.snapshot_id, exact=True).count,
                "dense": client.count(self.snapshot_id, count_filter=with_vector(""),
                                      exact=True).count,
                "lexical": client.count(self.snapshot_id, count_filter=with_vector(SPARSE),
                                        exact=True).count,
            }

    def close(self) -> None:
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        self._owner._lease.release()


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)
