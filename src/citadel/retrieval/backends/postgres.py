"""PostgreSQL + pgvector: one schema per snapshot, a pointer row for the alias, RRF in SQL.

Layout. The backend's own tables live in schema `citadel` and are created by versioned
migrations (`MIGRATIONS`, applied once under an advisory lock and recorded in
`citadel.schema_migrations`). Each snapshot is a schema `citadel_kb_<hex>` holding
`documents`, `chunks` and `terms`: a chunk row carries its payload (the chunk's fields as
JSON) and its dense vector (HNSW index, cosine); `terms` holds the `tsvector` of each chunk's
index text (GIN index) with the filter columns. A snapshot
is written in one transaction and registered in `citadel.snapshots` in that same transaction,
so a crash leaves either nothing or a whole snapshot. `activate` moves the pointer row
`citadel.aliases['active']` and re-creates the views `citadel.active_chunks` /
`citadel.active_documents` in one transaction.

Queries name the snapshot's schema (the one the catalog validated), never the views. One SQL
statement takes the dense top-n through the HNSW index and the lexical top-n through
full-text search (`ts_rank`, not BM25: PostgreSQL has no BM25; see LEXICAL_BUDGET) and
fuses them by reciprocal-rank fusion; the tenant, category and `retrievable` filters are SQL
predicates in both branches.
"""

from __future__ import annotations

import logging
import math
import re
import struct
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np

from citadel.config import ConfigError
from citadel.records import Chunk, Document, RankedChunk
from citadel.retrieval.backends.base import (
    Backend,
    CountingSearchIndex,
    RetrievalError,
    SearchResult,
)
from citadel.retrieval.backends.lease import Lease
from citadel.retrieval.backends.payload import chunk_payload, read_chunk, read_document

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

# The pool logs each failed reconnect as a warning; with no logging configured (the CLI)
# Python would print them all to stderr. Apps that configure logging still receive them.
logging.getLogger("psycopg.pool").addHandler(logging.NullHandler())

RRF_K = 60
# 1/(k + rank) with rank from 1: a chunk first in both lists scores 2/(k+1). Dividing by that
# puts retrieval_score in [0, 1], comparable with the local backend's fused score.
RRF_MAX = 2.0 / (RRF_K + 1)
SPARE = 8  # over-fetch so malformed rows skipped on the way still leave k chunks
TEXT_SEARCH_CONFIG = "english"
# A question's lexemes are OR-ed, rarest first, while the rows they match add up to at most
# LEXICAL_BUDGET (the rarest is always kept). ts_rank has no IDF and must score every
# matching row, so frequent lexemes cost the most and say the least: at 100k chunks a claim
# like "0-dimensional biomaterials show inductive properties" matches 20% of rows through
# "show" and "0" alone. Below the budget (any corpus up to that many chunks) all are kept.
LEXICAL_BUDGET = 5000
SEMANTICS = {"engine": "postgres-fts", "config": TEXT_SEARCH_CONFIG, "rank": "ts_rank",
             "query": "or-of-rarest-terms-v1", "match_budget": LEXICAL_BUDGET}
# 2: chunks and terms carry `retrievable` (`Chunk.retrievable`), a predicate of every search.
LAYOUT_VERSION = 2
ALIAS = "active"

# Versioned migrations of the backend's own tables: append, never edit a released one.
MIGRATIONS: tuple[tuple[int, str, str], ...] = (
    (1, "snapshot registry and alias pointer", """
        CREATE EXTENSION IF NOT EXISTS vector;
        CREATE TABLE citadel.snapshots (
            snapshot_id text PRIMARY KEY,
            schema_name text UNIQUE NOT NULL,
            layout integer NOT NULL,
            dimension integer NOT NULL,
            documents integer NOT NULL,
            chunks integer NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now());
        CREATE TABLE citadel.aliases (
            name text PRIMARY KEY,
            snapshot_id text NOT NULL REFERENCES citadel.snapshots ON DELETE RESTRICT,
            switched_at timestamptz NOT NULL DEFAULT now());
    """),
)


def _psycopg() -> tuple[Any, Any]:
    try:
        import psycopg
        from psycopg_pool import ConnectionPool
    except ImportError:
        raise ConfigError(
            "the postgres backend needs psycopg 3 and psycopg-pool: "
            "pip install 'citadel[postgres]'"
        ) from None
    return psycopg, ConnectionPool


def schema_name(snapshot_id: str) -> str:
    return ("citadel_" + re.sub(r"[^a-z0-9_]", "_", snapshot_id.lower()))[:63]


def vector_literal(vector: np.ndarray) -> str:
    return "[" + ",".join(repr(float(x)) for x in np.asarray(vector, dtype=np.float32)) + "]"


def _vector_binary(dim: int) -> Any:
    header = struct.pack(">HH", dim, 0)  # pgvector's binary format: dim, unused, float4 BE
    return lambda row: header + row.tobytes()


class PostgresBackend(Backend):
    name = "postgres"
    mirrors_alias = True
    lexical_semantics = SEMANTICS

    def __init__(self, dsn: str, *, timeout: float = 5.0, ef_search: int = 100,
                 max_connections: int = 8, lexical_budget: int = LEXICAL_BUDGET) -> None:
        self.dsn = dsn
        self.lexical_budget = lexical_budget
        self.timeout = timeout
        self.ef_search = ef_search
        self.max_connections = max_connections
        self._lease: Lease[ConnectionPool] = Lease(
            self._connect, lambda p: p.close(), keep_idle=True
        )
        self._migrated = False

    # -- connections -------------------------------------------------------------------
    def _connect(self) -> ConnectionPool:
        _, pool_class = _psycopg()
        options = " ".join([
            f"-c statement_timeout={int(self.timeout * 1000)}",
            f"-c hnsw.ef_search={self.ef_search}",
            # pgvector >= 0.8: keep scanning the graph until a filtered query has its LIMIT.
            "-c hnsw.iterative_scan=relaxed_order",
            "-c client_min_messages=warning",
        ])
        pool = pool_class(
            self.dsn, min_size=1, max_size=self.max_connections, open=False,
            timeout=self.timeout, name="citadel",
            kwargs={"autocommit": True, "connect_timeout": max(1, math.ceil(self.timeout)),
                    "options": options, "application_name": "citadel"},
            check=pool_class.check_connection,
        )
        pool.open(wait=False)
        return pool

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        """A pooled connection; any failure talking to PostgreSQL becomes a RetrievalError."""
        psycopg, _ = _psycopg()
        from psycopg_pool import PoolTimeout

        try:
            with self._lease.use() as pool:
                if not self._migrated:
                    self._migrate(pool)
                with pool.connection() as conn:
                    yield conn
        except (RetrievalError, ConfigError):
            raise
        except (psycopg.Error, PoolTimeout, OSError) as exc:
            raise RetrievalError(f"postgres: {type(exc).__name__}: {exc}".strip()) from exc

    def _migrate(self, pool: ConnectionPool) -> None:
        with pool.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('citadel-migrations'))")
            conn.execute("CREATE SCHEMA IF NOT EXISTS citadel")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS citadel.schema_migrations (version integer "
                "PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL "
                "DEFAULT now())"
            )
            applied = {r[0] for r in conn.execute("SELECT version FROM citadel.schema_migrations")}
            for version, description, statements in MIGRATIONS:
                if version in applied:
                    continue
                conn.execute(statements)
                conn.execute("INSERT INTO citadel.schema_migrations (version, description) "
                             "VALUES (%s, %s)", (version, description))
        self._migrated = True

    def schema_version(self) -> int:
        with self.connection() as conn:
            row = conn.execute("SELECT max(version) FROM citadel.schema_migrations").fetchone()
        return int(row[0] or 0)

    # -- snapshots -----------------------------------------------------------------------
    def has_snapshot(self, snapshot_id: str) -> bool:
        with self.connection() as conn:
            row = conn.execute("SELECT layout FROM citadel.snapshots WHERE snapshot_id=%s",
                               (snapshot_id,)).fetchone()
        return row is not None and row[0] == LAYOUT_VERSION

    def engine_alias(self) -> str | None:
        with self.connection() as conn:
            row = conn.execute("SELECT snapshot_id FROM citadel.aliases WHERE name=%s",
                               (ALIAS,)).fetchone()
        return row[0] if row else None

    def activate(self, snapshot_id: str) -> None:
        from psycopg import sql

        with self.connection() as conn, conn.transaction():
            row = conn.execute("SELECT schema_name FROM citadel.snapshots WHERE snapshot_id=%s",
                               (snapshot_id,)).fetchone()
            if row is None:
                raise RetrievalError(f"postgres has no snapshot {snapshot_id}")
            schema = sql.Identifier(row[0])
            conn.execute(
                "INSERT INTO citadel.aliases (name, snapshot_id) VALUES (%s, %s) ON CONFLICT "
                "(name) DO UPDATE SET snapshot_id=excluded.snapshot_id, switched_at=now()",
                (ALIAS, snapshot_id),
            )
            # Views for SQL consumers (e.g. the agent's own queries); dropped and re-created
            # because the vector column's dimension may differ between snapshots.
            conn.execute("DROP VIEW IF EXISTS citadel.active_chunks, citadel.active_documents")
            conn.execute(sql.SQL("CREATE VIEW citadel.active_chunks AS SELECT * FROM {}.chunks")
                         .format(schema))
            conn.execute(sql.SQL(
                "CREATE VIEW citadel.active_documents AS SELECT * FROM {}.documents"
            ).format(schema))

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
        from psycopg import sql
        from psycopg.types.json import Jsonb

        dim = int(vectors.shape[1])
        big_endian = np.ascontiguousarray(vectors, dtype=">f4")
        encode = _vector_binary(dim)
        schema = schema_name(snapshot_id)
        s = sql.Identifier(schema)
        with self.connection() as conn, conn.transaction():
            conn.execute("SET LOCAL statement_timeout = 0")  # an HNSW build takes a while
            conn.execute("SET LOCAL maintenance_work_mem = '1GB'")
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"citadel:{snapshot_id}",))
            if conn.execute("SELECT 1 FROM citadel.aliases WHERE snapshot_id=%s",
                            (snapshot_id,)).fetchone():
                # Served (by another CITADEL_HOME sharing this database): never rewritten. A
                # registered snapshot is complete and its id content-derived: it is this build.
                return
            # An earlier build of the same id that never became active.
            conn.execute("DELETE FROM citadel.snapshots WHERE snapshot_id=%s", (snapshot_id,))
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(s))
            conn.execute(sql.SQL("CREATE SCHEMA {}").format(s))
            conn.execute(sql.SQL(
                "CREATE TABLE {}.documents (document_id text PRIMARY KEY, payload jsonb NOT NULL)"
            ).format(s))
            # Columns are nullable on purpose: a row is trusted only after its payload parses.
            conn.execute(sql.SQL("""
                CREATE TABLE {}.chunks (
                    pos integer PRIMARY KEY,
                    chunk_id text, document_id text, tenant text, category text,
                    retrievable boolean NOT NULL,
                    payload jsonb,
                    embedding vector({}),
                    body text)
            """).format(s, sql.Literal(dim)))
            with conn.cursor().copy(sql.SQL(
                "COPY {}.documents (document_id, payload) FROM STDIN (FORMAT BINARY)"
            ).format(s)) as copy:
                copy.set_types(["text", "jsonb"])
                for d in documents:
                    copy.write_row((d.document_id, Jsonb(d.model_dump(mode="json"))))
            with conn.cursor().copy(sql.SQL(
                "COPY {}.chunks (pos, chunk_id, document_id, tenant, category, retrievable, "
                "payload, embedding, body) FROM STDIN (FORMAT BINARY)"
            ).format(s)) as copy:
                # The server decodes each field with its column's binary input, so the vector
                # goes as pgvector's binary encoding, passed through as raw bytes.
                copy.set_types(["int4", "text", "text", "text", "text", "bool", "jsonb",
                                "bytea", "text"])
                for i, (c, text) in enumerate(zip(chunks, index_texts, strict=True)):
                    copy.write_row((i, c.chunk_id, c.document_id, c.tenant, c.category,
                                    c.retrievable, Jsonb(chunk_payload(c)),
                                    encode(big_endian[i]), text))
            # The lexical index is a narrow table of its own: ranking reads every matching
            # row, and reading them out of the wide chunk rows (payload, vector) costs ~10x.
            # Filter columns are copied so that they apply inside the lexical scan.
            conn.execute(sql.SQL(
                "CREATE TABLE {s}.terms AS SELECT pos, tenant, category, retrievable, "
                "to_tsvector({config}, body) AS lexical FROM {s}.chunks ORDER BY pos"
            ).format(s=s, config=sql.Literal(TEXT_SEARCH_CONFIG)))
            for statement in (
                "ALTER TABLE {}.terms ADD PRIMARY KEY (pos)",
                "CREATE INDEX ON {}.chunks USING hnsw (embedding vector_cosine_ops)",
                "CREATE INDEX ON {}.terms USING gin (lexical)",
                "CREATE INDEX ON {}.chunks (chunk_id)",
                "CREATE INDEX ON {}.chunks (document_id, pos)",
            ):
                conn.execute(sql.SQL(statement).format(s))
            # Document frequency of every lexeme, to pick a question's rarest terms.
            conn.execute(sql.SQL(
                "CREATE TABLE {}.lexicon AS SELECT word, ndoc FROM ts_stat({})"
            ).format(s, sql.Literal(sql.SQL("SELECT lexical FROM {}.terms").format(s)
                                    .as_string(conn))))
            conn.execute(sql.SQL("ALTER TABLE {}.lexicon ADD PRIMARY KEY (word)").format(s))
            conn.execute(sql.SQL("ANALYZE {}.chunks, {}.terms, {}.lexicon").format(s, s, s))
            conn.execute(
                "INSERT INTO citadel.snapshots (snapshot_id, schema_name, layout, dimension, "
                "documents, chunks) VALUES (%s, %s, %s, %s, %s, %s)",
                (snapshot_id, schema, LAYOUT_VERSION, dim, len(documents), len(chunks)),
            )

    def delete_snapshot(self, snapshot_id: str) -> None:
        from psycopg import sql

        with self.connection() as conn, conn.transaction():
            if conn.execute("SELECT 1 FROM citadel.aliases WHERE snapshot_id=%s",
                            (snapshot_id,)).fetchone():
                raise RetrievalError(f"refusing to delete {snapshot_id}: an alias points at it")
            conn.execute("DELETE FROM citadel.snapshots WHERE snapshot_id=%s", (snapshot_id,))
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(
                sql.Identifier(schema_name(snapshot_id))))

    def open(self, snapshot_id: str, dense_weight: float, candidates: int) -> PostgresIndex:
        return PostgresIndex(self, snapshot_id, candidates)

    def close(self) -> None:
        self._lease.close()


_SEARCH = """
WITH qterms AS (
    SELECT word, ndoc,
           sum(ndoc) OVER (ORDER BY ndoc, word) AS running,
           row_number() OVER (ORDER BY ndoc, word) AS i
    FROM {s}.lexicon
    WHERE word = ANY (tsvector_to_array(to_tsvector({config}, %(text)s)))
), q AS (
    SELECT string_agg(quote_literal(word), ' | ')::tsquery AS q
    FROM qterms WHERE running <= %(budget)s OR i = 1
), dense AS MATERIALIZED (
    SELECT pos, embedding <=> %(vec)s::vector AS distance
    FROM {s}.chunks
    WHERE {where}
    ORDER BY embedding <=> %(vec)s::vector
    LIMIT %(n)s
), dense_ranked AS (
    SELECT pos, row_number() OVER (ORDER BY distance, pos) AS r FROM dense
), lexical AS MATERIALIZED (
    SELECT pos, ts_rank(lexical, q) AS score,
           row_number() OVER (ORDER BY ts_rank(lexical, q) DESC, pos) AS r
    FROM {s}.terms, (SELECT q FROM q) AS query(q)
    WHERE lexical @@ q AND {where}
    ORDER BY score DESC, pos
    LIMIT %(n)s
), fused AS (
    SELECT coalesce(d.pos, l.pos) AS pos,
           coalesce(1.0 / ({k} + d.r), 0) + coalesce(1.0 / ({k} + l.r), 0) AS rrf,
           l.score AS lexical_score
    FROM dense_ranked d FULL OUTER JOIN lexical l ON d.pos = l.pos
    ORDER BY rrf DESC, pos
    LIMIT %(limit)s
)
SELECT f.pos, f.rrf::float8, (1 - (c.embedding <=> %(vec)s::vector))::float8,
       f.lexical_score::float8, c.payload::text
FROM fused f JOIN {s}.chunks c ON c.pos = f.pos
ORDER BY f.rrf DESC, f.pos
"""
# No tenant (NULL) means public rows only: NULL and "" both store "no tenant". A chunk that is
# not retrievable (flagged, retired) takes no place in either branch.
_WHERE = ("retrievable AND coalesce(tenant, '') IN (coalesce(%(tenant)s::text, ''), '') "
          "AND (%(category)s::text IS NULL OR category = %(category)s::text)")


class PostgresIndex(CountingSearchIndex):
    backend = "postgres"
    strategy = f"hybrid-rrf(k={RRF_K}; pgvector-hnsw-cosine + fts-ts_rank)"

    def __init__(self, owner: PostgresBackend, snapshot_id: str, candidates: int) -> None:
        from psycopg import sql

        self.snapshot_id = snapshot_id
        self.candidates = candidates
        self.lexical_budget = owner.lexical_budget
        self._owner = owner
        s = sql.Identifier(schema_name(snapshot_id))
        self._search_sql = sql.SQL(_SEARCH).format(
            s=s, where=sql.SQL(_WHERE), config=sql.Literal(TEXT_SEARCH_CONFIG),
            k=sql.Literal(RRF_K))
        self._chunk_sql = sql.SQL("SELECT pos, payload::text FROM {}.chunks WHERE chunk_id=%s "
                                  "ORDER BY pos").format(s)
        self._of_sql = sql.SQL("SELECT pos, payload::text FROM {}.chunks WHERE document_id=%s "
                               "ORDER BY pos").format(s)
        self._doc_sql = sql.SQL("SELECT payload::text FROM {}.documents WHERE document_id=%s"
                                ).format(s)
        self._count_sql = sql.SQL(
            "SELECT (SELECT count(*) FROM {}.documents), count(*), count(embedding), "
            "(SELECT count(lexical) FROM {}.terms) FROM {}.chunks").format(s, s, s)
        owner._lease.hold()  # the pool stays open while this index is
        self._closed = False

    def search_result(
        self,
        text: str,
        vector: np.ndarray,
        k: int,
        *,
        tenant: str | None = None,
        category: str | None = None,
    ) -> SearchResult:
        params = {"vec": vector_literal(vector), "text": text, "budget": self.lexical_budget,
                  "n": self.candidates, "limit": k + SPARE, "tenant": tenant,
                  "category": category}
        with self._owner.connection() as conn:
            rows = conn.execute(self._search_sql, params).fetchall()
        ranked: list[RankedChunk] = []
        skipped = 0
        for pos, rrf, dense, lexical, payload in rows:
            if len(ranked) >= k:
                break
            chunk = read_chunk(payload, f"postgres:{self.snapshot_id}/chunks/{pos}")
            if chunk is None:
                skipped += 1
                continue
            ranked.append(RankedChunk(
                chunk=chunk,
                retrieval_score=round(min(1.0, rrf / RRF_MAX), 6),
                dense_score=None if dense is None else round(dense, 6),
                lexical_score=None if lexical is None else round(lexical, 6),
                rank=len(ranked) + 1,
            ))
        return SearchResult(ranked, malformed_skipped=skipped)

    def get_chunk(self, chunk_id: str) -> Chunk | None:
        with self._owner.connection() as conn:
            rows = conn.execute(self._chunk_sql, (chunk_id,)).fetchall()
        for pos, payload in rows:
            chunk = read_chunk(payload, f"postgres:{self.snapshot_id}/chunks/{pos}")
            if chunk is not None and chunk.chunk_id == chunk_id:
                return chunk
        return None

    def get_document(self, document_id: str) -> Document | None:
        with self._owner.connection() as conn:
            row = conn.execute(self._doc_sql, (document_id,)).fetchone()
        if row is None:
            return None
        doc = read_document(row[0], f"postgres:{self.snapshot_id}/documents/{document_id}")
        return doc if doc is not None and doc.document_id == document_id else None

    def chunks_of(self, document_id: str) -> list[Chunk]:
        with self._owner.connection() as conn:
            rows = conn.execute(self._of_sql, (document_id,)).fetchall()
        chunks = (read_chunk(p, f"postgres:{self.snapshot_id}/chunks/{pos}") for pos, p in rows)
        return [c for c in chunks if c is not None and c.document_id == document_id]

    def count(self) -> dict[str, int]:
        with self._owner.connection() as conn:
            docs, chunks, dense, lexical = conn.execute(self._count_sql).fetchone()
        return {"documents": docs, "chunks": chunks, "dense": dense, "lexical": lexical}

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._owner._lease.release()
