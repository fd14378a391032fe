"""Knowledge snapshots: fingerprinted, immutable index artifacts behind an atomic alias.

The catalog (SQLite, `<home>/catalog.sqlite`) records every snapshot's state and fingerprint
and the alias `active`. Switching the alias is one transaction: readers see the old snapshot or
the new one, never a mixture. Snapshot data lives with the backend; the catalog only names it.
Each completed build also leaves a readable `manifest.json` (fingerprint, per-document content
hashes, counts, times) in `<home>/snapshots/<id>/`, which for the local backend is the
snapshot's own data directory.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from citadel.knowledge import leases
from citadel.knowledge.changes import Changes
from citadel.knowledge.leases import LeaseHolder, SnapshotLease
from citadel.knowledge.source_set import SourceSet
from citadel.knowledge.sqlite_wal import enable_wal
from citadel.records import Document
from citadel.retrieval.embedders.base import Embedder
from citadel.retrieval.lexical import SEMANTICS as LEXICAL_SEMANTICS
from citadel.text.analysis import analyser_identity

# 2: chunks carry injection-screening flags (suspicious, suspicious_reason) and HTML documents
# their hidden_spans; a version-1 snapshot has no flags and must not be served.
# 3: PDF documents carry their page boundaries and outline, and chunks their pages
# (page_start, page_end, page_breaks), which citations name.
# 4: chunks carry their language analysis (`Chunk.analysis`: sentences, entities, candidate
# answer spans), and the analyser's identity is part of the fingerprint.
# 5: documents carry document-level screening flags (`Document.flags`: an HTML <meta> that
# tries to set authority, supersedes or tenant), and authority/supersedes/tenant come only
# from Markdown front matter or the operator's citadel-sources.toml, never from HTML.
# 6: Markdown front matter is no part of a document's text (offsets and hashes change) and
# sets only title, category, date and tags (`Document.tags`); authority/supersedes/tenant
# come only from citadel-sources.toml, so a version-5 snapshot may hold values a file set
# for itself and must not be served.
# 7: chunks carry `retired_by` (their document is superseded within the snapshot), and every
# backend keeps flagged and retired chunks out of search before the top k is chosen (a
# version-6 snapshot lets planted chunks take the top k's places and the retired policy be
# retrieved alone).
# 8: a Markdown or plain-text document's text is the file's own text (universal newlines, a
# byte-order mark and the front matter included, `Document.body_start` where the body
# begins), so offsets index the file and `content_sha256` hashes all of it; a version-7
# snapshot's offsets of a file with front matter are off by the front matter's length.
KNOWLEDGE_SCHEMA_VERSION = 8
MANIFEST_FORMAT = "citadel-snapshot-manifest/1"
DENSE_SCHEMA = {"dtype": "float32", "metric": "cosine", "normalised": True}
SPARSE_SCHEMA = {"kind": "bm25-terms", "version": 1}
ACTIVE = "active"

State = Literal["building", "complete", "failed"]


class Fingerprinted(Protocol):
    """Parameters that describe themselves for a fingerprint (e.g. the ingest stage's
    `ChunkingParams`): knowledge does not need to know the stage that cut the chunks."""

    def fingerprint(self) -> dict[str, Any]: ...


class SnapshotError(RuntimeError):
    """A snapshot operation that was refused or failed; the message says why."""


class SnapshotLeased(SnapshotError):
    """Refused: a live process serves the snapshot (the message names it)."""


# Buttons under the question box, not a question bank: so many per tab, each so long at most.
MAX_EXAMPLES = 10
MAX_EXAMPLE_CHARS = 200
ExampleQuestion = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1,
                                                   max_length=MAX_EXAMPLE_CHARS)]


class Examples(BaseModel):
    """The operator's example questions, shown as the web page's "Try:" buttons: `questions`
    for the knowledge-base tab, `customer_questions` for the Customer support tab. They come
    from `[examples]` in citadel-sources.toml (`citadel.ingest.operator_metadata`) and are
    kept in the snapshot's fingerprint; a snapshot built before has none."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    questions: tuple[ExampleQuestion, ...] = Field(default=(), max_length=MAX_EXAMPLES)
    customer_questions: tuple[ExampleQuestion, ...] = Field(default=(),
                                                            max_length=MAX_EXAMPLES)


class Fingerprint(BaseModel):
    """Everything that changes what a chunk id or a score means, and what the snapshot
    offers beside its chunks (the operator's example questions: a snapshot is immutable, so
    a new list is a new snapshot, built from the embedding cache)."""

    model_config = ConfigDict(frozen=True)

    knowledge_schema_version: int = KNOWLEDGE_SCHEMA_VERSION
    corpus_sha256: str
    documents: int
    embedder: dict[str, Any]
    dense_schema: dict[str, Any] = DENSE_SCHEMA
    sparse_schema: dict[str, Any] = SPARSE_SCHEMA
    chunking: dict[str, Any]
    lexical: dict[str, Any] = LEXICAL_SEMANTICS
    analysis: dict[str, Any] = {}
    dense_index: dict[str, Any] | None = Field(
        default=None, description="The approximate dense index built with the snapshot (its "
                                  "parameters); None: exact search only.")
    examples: Examples = Examples()

    @property
    def snapshot_id(self) -> str:
        parts = self.model_dump()
        if parts["dense_index"] is None:
            del parts["dense_index"]  # a snapshot without an ANN index keeps its id
        if self.examples == Examples():
            del parts["examples"]  # so does one without example questions
        blob = json.dumps(parts, sort_keys=True, separators=(",", ":"))
        return "kb-" + hashlib.sha256(blob.encode()).hexdigest()[:16]

    def runtime_part(self) -> dict[str, Any]:
        """The parts a running configuration must match to serve this snapshot."""
        return {
            "knowledge_schema_version": self.knowledge_schema_version,
            "embedder": self.embedder,
            "dense_schema": self.dense_schema,
            "sparse_schema": self.sparse_schema,
            "lexical": self.lexical,
            "analysis": self.analysis,
        }


def corpus_sha256(documents: Iterable[Document]) -> str:
    """Covers every document's metadata and, through `content_sha256`, its text."""
    h = hashlib.sha256()
    for doc in sorted(documents, key=lambda d: d.document_id):
        meta = doc.model_dump(mode="json", exclude={"text"})
        h.update(json.dumps(meta, sort_keys=True).encode())
        h.update(b"\n")
    return h.hexdigest()


def fingerprint(
    documents: list[Document],
    embedder: Embedder,
    chunking: Fingerprinted,
    lexical: dict[str, Any] | None = None,
    analysis: dict[str, Any] | None = None,
    dense_index: dict[str, Any] | None = None,
    examples: Examples | None = None,
) -> Fingerprint:
    """`lexical` is the backend's lexical semantics (`Backend.lexical_semantics`), `analysis`
    the identity of the analyser that analysed the chunks (default: the installed one),
    `examples` the operator's example questions."""
    return Fingerprint(
        corpus_sha256=corpus_sha256(documents),
        documents=len(documents),
        embedder=embedder.fingerprint(),
        chunking=chunking.fingerprint(),
        lexical=LEXICAL_SEMANTICS if lexical is None else lexical,
        analysis=analyser_identity() if analysis is None else analysis,
        dense_index=dense_index,
        examples=examples or Examples(),
    )


def runtime_fingerprint(
    embedder: Embedder, lexical: dict[str, Any] | None = None
) -> dict[str, Any]:
    """What the running configuration offers, to compare with `Fingerprint.runtime_part`."""
    return {
        "knowledge_schema_version": KNOWLEDGE_SCHEMA_VERSION,
        "embedder": embedder.fingerprint(),
        "dense_schema": DENSE_SCHEMA,
        "sparse_schema": SPARSE_SCHEMA,
        "lexical": LEXICAL_SEMANTICS if lexical is None else lexical,
        "analysis": analyser_identity(),
    }


def incompatibilities(manifest_fp: dict[str, Any], runtime: dict[str, Any]) -> list[str]:
    """Human-readable differences, e.g. "embedder.model: snapshot has X, running config Y"."""
    diffs: list[str] = []
    for key, want in runtime.items():
        have = manifest_fp.get(key)
        if isinstance(want, dict) and isinstance(have, dict):
            for sub in sorted(set(want) | set(have)):
                if have.get(sub) != want.get(sub):
                    diffs.append(
                        f"{key}.{sub}: snapshot has {have.get(sub)!r}, "
                        f"running configuration has {want.get(sub)!r}"
                    )
        elif have != want:
            diffs.append(f"{key}: snapshot has {have!r}, running configuration has {want!r}")
    return diffs


class SnapshotInfo(BaseModel):
    model_config = ConfigDict(frozen=True)

    snapshot_id: str
    backend: str
    state: State
    created_at: str
    completed_at: str | None = None
    documents: int = 0
    chunks: int = 0
    fingerprint: dict[str, Any]
    error: str | None = None
    builder: str | None = None

    @property
    def examples(self) -> Examples:
        """The snapshot's example questions; none for a snapshot built before they were kept,
        or whose list this version would refuse (the page then shows no buttons)."""
        try:
            return Examples.model_validate(self.fingerprint.get("examples") or {})
        except ValidationError:
            return Examples()

    @property
    def embedder_name(self) -> str:
        emb = self.fingerprint.get("embedder", {})
        return f"{emb.get('model', '?')} ({emb.get('dimension', '?')}d)"


def _now() -> str:
    # Microseconds: snapshots built in the same second still order by creation.
    return dt.datetime.now(dt.UTC).isoformat(timespec="microseconds")


class DocumentEntry(BaseModel):
    model_config = ConfigDict(frozen=True)

    document_id: str
    source: str
    content_sha256: str
    updated_at: str | None = Field(
        default=None, description="When this text first entered a snapshot: the creation of "
        "the build that added or changed the document. None in a manifest written before.")


class Manifest(BaseModel):
    """The readable description of one snapshot, written next to its data. Fields added
    later have defaults, so a manifest written before them still reads."""

    model_config = ConfigDict(frozen=True)

    format: str = MANIFEST_FORMAT
    snapshot_id: str
    backend: str
    created_at: str
    fingerprint: dict[str, Any]
    counts: dict[str, int]
    documents: tuple[DocumentEntry, ...]
    build: dict[str, Any] = {}
    changes: Changes | None = Field(default=None, description="The documents added, changed "
                                    "and removed since the snapshot active when it was built.")
    sources: SourceSet | None = Field(default=None, description="What it was built from, for "
                                      "the next document change to rebuild (None: built "
                                      "before sources were recorded).")

    def updated(self, document_id: str) -> str:
        """When a document's text last changed, as far as this manifest knows."""
        entry = next((d for d in self.documents if d.document_id == document_id), None)
        return (entry.updated_at if entry is not None else None) or self.created_at


def build_manifest(
    snapshot_id: str,
    backend: str,
    fp: Fingerprint,
    documents: Iterable[Document],
    chunks: int,
    created_at: str,
    build: dict[str, Any] | None = None,
    *,
    previous: Manifest | None = None,
    changes: Changes | None = None,
    sources: SourceSet | None = None,
) -> Manifest:
    """`previous`: the manifest of the snapshot active before, whose `updated_at` an
    unchanged document keeps."""
    kept = {d.document_id: d for d in previous.documents} if previous is not None else {}

    def updated_at(doc: Document) -> str:
        before = kept.get(doc.document_id)
        if previous is None or before is None or before.content_sha256 != doc.content_sha256:
            return created_at
        return previous.updated(doc.document_id)

    docs = tuple(
        DocumentEntry(document_id=d.document_id, source=d.source,
                      content_sha256=d.content_sha256, updated_at=updated_at(d))
        for d in sorted(documents, key=lambda d: d.document_id)
    )
    return Manifest(
        snapshot_id=snapshot_id,
        backend=backend,
        created_at=created_at,
        fingerprint=fp.model_dump(mode="json"),
        counts={"documents": len(docs), "chunks": chunks, "dense": chunks, "lexical": chunks},
        documents=docs,
        build=build or {},
        changes=changes,
        sources=sources,
    )


class Catalog:
    """The record of snapshots and aliases for one CITADEL_HOME."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.path = home / "catalog.sqlite"

    def snapshot_dir(self, snapshot_id: str) -> Path:
        """Where the manifest lives (for the local backend, also the data)."""
        return self.home / "snapshots" / snapshot_id

    def manifest_path(self, snapshot_id: str) -> Path:
        return self.snapshot_dir(snapshot_id) / "manifest.json"

    def write_manifest(self, manifest: Manifest) -> Path:
        """Write atomically (temp file + rename): a reader sees the whole manifest or none."""
        path = self.manifest_path(manifest.snapshot_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".manifest.{os.getpid()}.tmp")
        tmp.write_text(manifest.model_dump_json(indent=2) + "\n")
        os.replace(tmp, path)
        return path

    def read_manifest(self, snapshot_id: str) -> Manifest | None:
        try:
            return Manifest.model_validate_json(self.manifest_path(snapshot_id).read_text())
        except FileNotFoundError:
            return None
        except ValueError as exc:
            raise SnapshotError(f"manifest of {snapshot_id} is unreadable: {exc}") from None

    def active_manifest(self) -> Manifest | None:
        """The manifest of the active snapshot; None when nothing is active (or it has none)."""
        active = self.alias()
        return self.read_manifest(active) if active is not None else None

    def record_sources(self, snapshot_id: str, sources: SourceSet) -> None:
        """Record what a complete snapshot can be rebuilt from, when an ingest that reused it
        read its documents from elsewhere (a folder moved; a snapshot built before sources
        were recorded). The one field of a manifest written after its build: it describes
        how to rebuild the snapshot, not what it holds (the data, the counts and the
        fingerprint never change)."""
        manifest = self.read_manifest(snapshot_id)
        if manifest is not None and manifest.sources != sources:
            self.write_manifest(manifest.model_copy(update={"sources": sources}))

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        self.home.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        try:
            enable_wal(conn)
            conn.execute(
                """CREATE TABLE IF NOT EXISTS snapshots (
                    snapshot_id TEXT PRIMARY KEY, backend TEXT NOT NULL, state TEXT NOT NULL,
                    created_at TEXT NOT NULL, completed_at TEXT, documents INTEGER DEFAULT 0,
                    chunks INTEGER DEFAULT 0, fingerprint TEXT NOT NULL, error TEXT,
                    builder TEXT)"""
            )
            columns = {r[1] for r in conn.execute("PRAGMA table_info(snapshots)")}
            if "builder" not in columns:  # a catalog written before builders were recorded
                conn.execute("ALTER TABLE snapshots ADD COLUMN builder TEXT")
            conn.execute(
                """CREATE TABLE IF NOT EXISTS aliases (
                    name TEXT PRIMARY KEY, snapshot_id TEXT NOT NULL, updated_at TEXT NOT NULL)"""
            )
            conn.execute(
                """CREATE TABLE IF NOT EXISTS alias_history (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL,
                    snapshot_id TEXT NOT NULL, switched_at TEXT NOT NULL)"""
            )
            conn.execute(leases.TABLE)
            yield conn
        finally:
            conn.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._db() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    def get(self, snapshot_id: str) -> SnapshotInfo | None:
        with self._db() as db:
            row = db.execute(
                f"SELECT {_COLUMNS} FROM snapshots WHERE snapshot_id = ?", (snapshot_id,)
            ).fetchone()
        return _info(row) if row else None

    def list(self) -> list[SnapshotInfo]:
        with self._db() as db:
            rows = db.execute(
                f"SELECT {_COLUMNS} FROM snapshots ORDER BY created_at, snapshot_id"
            ).fetchall()
        return [_info(r) for r in rows]

    def resolve(self, prefix: str) -> str:
        """A full snapshot id from an id or an unambiguous prefix of one."""
        ids = [s.snapshot_id for s in self.list()]
        if prefix in ids:
            return prefix
        matches = [i for i in ids if i.startswith(prefix)]
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise SnapshotError(f"no snapshot {prefix!r} (see `citadel kb list`)")
        raise SnapshotError(f"{prefix!r} is ambiguous: {', '.join(matches)}")

    def begin(self, snapshot_id: str, backend: str, fp: Fingerprint, builder: str = "") -> None:
        """Record a build. Refuses to touch a complete snapshot (snapshots are immutable)."""
        with self._transaction() as db:
            row = db.execute(
                "SELECT state FROM snapshots WHERE snapshot_id=?", (snapshot_id,)
            ).fetchone()
            if row is not None and row[0] == "complete":
                raise SnapshotError(f"snapshot {snapshot_id} is complete and immutable")
            db.execute(
                "INSERT OR REPLACE INTO snapshots (snapshot_id, backend, state, created_at, "
                "documents, fingerprint, builder) VALUES (?, ?, 'building', ?, ?, ?, ?)",
                (snapshot_id, backend, _now(), fp.documents, fp.model_dump_json(),
                 builder or None),
            )

    def complete(self, snapshot_id: str, documents: int, chunks: int) -> None:
        with self._db() as db:
            db.execute(
                "UPDATE snapshots SET state='complete', completed_at=?, documents=?, chunks=?, "
                "error=NULL WHERE snapshot_id=? AND state='building'",
                (_now(), documents, chunks, snapshot_id),
            )

    def fail(self, snapshot_id: str, error: str) -> None:
        with self._db() as db:
            db.execute(
                "UPDATE snapshots SET state='failed', error=? WHERE snapshot_id=? "
                "AND state='building'",
                (error[:2000], snapshot_id),
            )

    def forget(self, snapshot_id: str, *, ignore_leases: bool = False) -> None:
        """Remove a snapshot's row. The active snapshot and a leased one (a live process
        serves it) are refused, in the same transaction that deletes, so a concurrent switch
        or server cannot slip in between check and delete."""
        with self._transaction() as db:
            row = db.execute("SELECT snapshot_id FROM aliases WHERE name=?", (ACTIVE,)).fetchone()
            if row is not None and row[0] == snapshot_id:
                raise SnapshotError(
                    f"refusing to delete the active snapshot {snapshot_id}: activate another "
                    "one first (`citadel kb activate ID` or `citadel kb rollback`)"
                )
            holders = leases.live_holders(db, snapshot_id)
            if holders and not ignore_leases:
                raise SnapshotLeased(
                    f"refusing to delete {snapshot_id}: it is being served by "
                    + "; ".join(h.describe() for h in holders)
                    + ". Stop that process or let it switch to the active snapshot first "
                    "(`--force` only if you know it is gone)"
                )
            for h in holders:
                leases.remove(db, h.token)
            db.execute("DELETE FROM snapshots WHERE snapshot_id=?", (snapshot_id,))

    def lease(self, snapshot_id: str, purpose: str) -> SnapshotLease:
        """Take a lease on a complete snapshot for this process (see `citadel.knowledge.
        leases`); refused if the snapshot is no longer in the catalog or not complete."""
        holder = leases.this_process(snapshot_id, purpose)
        with self._transaction() as db:
            row = db.execute(
                "SELECT state FROM snapshots WHERE snapshot_id=?", (snapshot_id,)
            ).fetchone()
            if row is None or row[0] != "complete":
                raise SnapshotError(f"cannot serve snapshot {snapshot_id}: it is "
                                    f"{row[0] if row else 'deleted'}")
            leases.live_holders(db)  # prunes the rows dead processes left
            leases.insert(db, holder)
        return SnapshotLease(holder, self._release_lease)

    def _release_lease(self, token: str) -> None:
        with self._db() as db:
            leases.remove(db, token)

    def leases(self, snapshot_id: str | None = None) -> list[LeaseHolder]:
        """Live leases (of one snapshot, or all). Reads only: dead rows are pruned by the
        next `lease` or `forget`."""
        with self._db() as db:
            return leases.live_holders(db, snapshot_id)

    def alias(self, name: str = ACTIVE) -> str | None:
        with self._db() as db:
            row = db.execute("SELECT snapshot_id FROM aliases WHERE name=?", (name,)).fetchone()
        return row[0] if row else None

    def history(self, name: str = ACTIVE) -> list[str]:
        with self._db() as db:
            rows = db.execute(
                "SELECT snapshot_id FROM alias_history WHERE name=? ORDER BY seq", (name,)
            ).fetchall()
        return [r[0] for r in rows]

    def switch(
        self, snapshot_id: str, name: str = ACTIVE, mirror: Callable[[str], None] | None = None
    ) -> None:
        """Point the alias at a complete snapshot, atomically.

        `mirror` (a backend's `activate`) switches the engine's own alias inside this
        transaction: if it fails, the catalog keeps the old snapshot too."""
        with self._transaction() as db:
            row = db.execute(
                "SELECT state FROM snapshots WHERE snapshot_id=?", (snapshot_id,)
            ).fetchone()
            if row is None or row[0] != "complete":
                state = row[0] if row else "unknown"
                raise SnapshotError(
                    f"snapshot {snapshot_id} is {state}; only a complete snapshot can be "
                    "activated"
                )
            now = _now()
            db.execute(
                "INSERT INTO aliases (name, snapshot_id, updated_at) VALUES (?, ?, ?) "
                "ON CONFLICT(name) DO UPDATE SET snapshot_id=excluded.snapshot_id, "
                "updated_at=excluded.updated_at",
                (name, snapshot_id, now),
            )
            db.execute(
                "INSERT INTO alias_history (name, snapshot_id, switched_at) VALUES (?, ?, ?)",
                (name, snapshot_id, now),
            )
            if mirror is not None:
                mirror(snapshot_id)


_COLUMNS = (
    "snapshot_id, backend, state, created_at, completed_at, documents, chunks, fingerprint, "
    "error, builder"
)


def _info(row: tuple) -> SnapshotInfo:
    return SnapshotInfo(
        snapshot_id=row[0],
        backend=row[1],
        state=row[2],
        created_at=row[3],
        completed_at=row[4],
        documents=row[5] or 0,
        chunks=row[6] or 0,
        fingerprint=json.loads(row[7]),
        error=row[8],
        builder=row[9],
    )
