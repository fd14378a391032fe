"""The request log: one append-only record per answered request, in SQLite under CITADEL_HOME.

It says how each request was answered (snapshot, backend, strategy, reranker, flags, citations
kept and dropped with reasons, the cited chunks' authority, stage latencies) and keeps the full
response. `citadel logs` lists and shows records; `citadel monitor` aggregates them.

Concurrency: WAL journal, a busy timeout, and one short `BEGIN IMMEDIATE` transaction per
record (insert + retention pruning), so threads and processes can append at once. Each
`RequestLog` keeps one writer connection (used under a lock, reopened in a forked child):
opening and closing a connection per record cost ~5 ms, most of it the checkpoint SQLite runs
when the last connection to a WAL database closes. Rows are never updated (a trigger refuses
it); retention (`log_retention_days`, `log_max_rows`) deletes the oldest. A failure to log
is reported on the `citadel.requestlog` logger and never fails the request.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import os
import re
import sqlite3
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any, TextIO

from pydantic import Field

from citadel.config import Settings
from citadel.records import Answer, DroppedCitation, Record

SCHEMA_VERSION = 1
FILENAME = "requests.sqlite"
BUSY_TIMEOUT_S = 10.0
WITHHELD = "[withheld: CITADEL_LOG_QUESTIONS=false]"
log = logging.getLogger("citadel.requestlog")


class CitedChunk(Record):
    chunk_id: str
    document_id: str
    title: str
    source: str
    authority: float | None = Field(description="The chunk's authority when it was cited.")


class RequestRecord(Record):
    """One answered request. Field names match the trace's; see docs/http.md "Request log"."""

    schema_version: int = SCHEMA_VERSION
    request_id: str = Field(description="The server's id: unique.")
    client_request_id: str | None = Field(
        default=None, description="The id the client sent, if any (may repeat).")
    tenant: str | None = Field(
        default=None, description="The tenant the request was answered for, as the server "
        "door that took it recorded it (\"\": public documents only); None when not "
        "recorded (`citadel ask`, the agent, logs from before it was).")
    time: dt.datetime = Field(description="When the answer was made (UTC).")
    question_sha256: str
    question: str | None = Field(description="The question as it was asked (a follow-up: "
                                 "its own words); None when CITADEL_LOG_QUESTIONS=false.")
    standalone_question: str | None = Field(
        default=None, description="A follow-up made to stand alone: the question answered "
        "(None: asked without earlier turns, or CITADEL_LOG_QUESTIONS=false).")
    standalone_how: str | None = Field(default=None, description="kept, rules or model "
                                       "(None: asked without earlier turns).")
    standalone_turns: int | None = Field(default=None, description="How many earlier turns "
                                         "back its words reach (None: no earlier turns).")
    snapshot_id: str
    backend: str
    strategy: str
    reranker: str
    retrieval_ok: bool
    rerank_ran: bool
    degraded: bool
    degraded_reasons: tuple[str, ...] = ()
    fallback_used: bool
    citations_available: bool
    citations_emitted: int
    citations_dropped: tuple[DroppedCitation, ...] = ()
    cited: tuple[CitedChunk, ...] = ()
    grounded: bool
    abstained: bool
    conflict: bool
    conflict_resolution: str | None = Field(
        default=None, description="The conflict's resolution (flagged | authoritative), if any.")
    generator: str
    prompt_version: str
    retrieval_config_version: str
    outcome: str | None = Field(default=None, description="The verdict's outcome: answered, "
                                "abstained or conflict (None: logged before verdicts).")
    decided_by: str | None = Field(default=None, description="The verdict's stage.")
    reason: str | None = Field(default=None, description="The verdict's reason code.")
    latencies_ms: dict[str, float] = Field(default_factory=dict)
    response: dict[str, Any] | None = Field(
        default=None, description="The full Answer as JSON (left out by summary reads).")


def build_record(
    question: str,
    answer: Answer,
    authorities: Mapping[str, float],
    *,
    log_question: bool = True,
    now: dt.datetime | None = None,
    tenant: str | None = None,
) -> RequestRecord:
    t = answer.trace
    asked = answer.standalone
    return RequestRecord(
        request_id=t.request_id,
        client_request_id=t.client_request_id,
        tenant=tenant,
        time=now or dt.datetime.now(dt.UTC),
        question_sha256=t.question_sha256 or hashlib.sha256(question.encode()).hexdigest(),
        question=question if log_question else None,
        standalone_question=asked.question if asked is not None and log_question else None,
        standalone_how=asked.how if asked is not None else None,
        standalone_turns=asked.turns_used if asked is not None else None,
        snapshot_id=t.snapshot_id,
        backend=t.backend,
        strategy=t.strategy,
        reranker=t.reranker,
        retrieval_ok=t.retrieval_ok,
        rerank_ran=t.rerank_ran,
        degraded=answer.degraded or t.degraded,
        degraded_reasons=t.degraded_reasons,
        fallback_used=t.fallback_used,
        citations_available=t.citations_available,
        citations_emitted=len(answer.citations),
        citations_dropped=t.citations_dropped,
        cited=tuple(
            CitedChunk(chunk_id=c.chunk_id, document_id=c.document_id, title=c.title,
                       source=c.source, authority=authorities.get(c.chunk_id))
            for c in answer.citations
        ),
        grounded=answer.grounded,
        abstained=answer.abstained,
        conflict=answer.conflict is not None,
        # `resolution` arrives with the conflicts work (issue 7); absent, it stays None.
        conflict_resolution=getattr(answer.conflict, "resolution", None),
        generator=t.generator,
        prompt_version=t.prompt_version,
        retrieval_config_version=t.retrieval_config_version,
        outcome=answer.verdict.outcome if answer.verdict else None,
        decided_by=answer.verdict.stage if answer.verdict else None,
        reason=answer.verdict.reason if answer.verdict else None,
        latencies_ms=t.latencies_ms,
        response=response_json(answer, log_question),
    )


def response_json(answer: Answer, log_question: bool) -> dict[str, Any]:
    """The Answer as JSON. Without question logging, the parts that echo the question (an
    abstention's text, `missing`, a follow-up's standalone question) are withheld too."""
    data = json.loads(answer.model_dump_json())
    if not log_question:
        data["missing"] = data["standalone"] = data["trace"]["standalone"] = None
        if answer.abstained:
            data["answer"] = WITHHELD
    return data


# Scalar fields are columns (filterable with plain SQL); lists and maps are JSON text.
_COLUMNS: dict[str, str] = {
    "schema_version": "INTEGER NOT NULL",
    "request_id": "TEXT NOT NULL",
    "client_request_id": "TEXT",
    "tenant": "TEXT",
    "time": "TEXT NOT NULL",
    "ts": "REAL NOT NULL",
    "question_sha256": "TEXT NOT NULL",
    "question": "TEXT",
    "standalone_question": "TEXT",
    "standalone_how": "TEXT",
    "standalone_turns": "INTEGER",
    "snapshot_id": "TEXT NOT NULL",
    "backend": "TEXT NOT NULL",
    "strategy": "TEXT NOT NULL",
    "reranker": "TEXT NOT NULL",
    "retrieval_ok": "INTEGER NOT NULL",
    "rerank_ran": "INTEGER NOT NULL",
    "degraded": "INTEGER NOT NULL",
    "degraded_reasons": "TEXT NOT NULL",
    "fallback_used": "INTEGER NOT NULL",
    "citations_available": "INTEGER NOT NULL",
    "citations_emitted": "INTEGER NOT NULL",
    "citations_dropped": "TEXT NOT NULL",
    "cited": "TEXT NOT NULL",
    "grounded": "INTEGER NOT NULL",
    "abstained": "INTEGER NOT NULL",
    "conflict": "INTEGER NOT NULL",
    "conflict_resolution": "TEXT",
    "generator": "TEXT NOT NULL",
    "prompt_version": "TEXT NOT NULL",
    "retrieval_config_version": "TEXT NOT NULL",
    "outcome": "TEXT",
    "decided_by": "TEXT",
    "reason": "TEXT",
    "latencies_ms": "TEXT NOT NULL",
    "response": "TEXT",
}
_JSON_COLUMNS = ("degraded_reasons", "citations_dropped", "cited", "latencies_ms", "response")
SUMMARY_COLUMNS = tuple(c for c in _COLUMNS if c not in ("response", "ts"))

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS requests (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  {(","+chr(10)+"  ").join(f"{name} {kind}" for name, kind in _COLUMNS.items())}
);
CREATE INDEX IF NOT EXISTS requests_ts ON requests(ts);
CREATE INDEX IF NOT EXISTS requests_request_id ON requests(request_id);
CREATE TRIGGER IF NOT EXISTS requests_append_only BEFORE UPDATE ON requests
BEGIN SELECT RAISE(ABORT, 'the request log is append-only'); END;
"""


def _table_columns(conn: sqlite3.Connection) -> set[str]:
    return {row[1] for row in conn.execute("PRAGMA table_info(requests)")}


def _add_missing_columns(conn: sqlite3.Connection) -> None:
    """A log written by an older Citadel lacks newer fields: add them (as nullable columns;
    old rows read back with the field's default)."""
    for name, kind in _COLUMNS.items():
        if name in _table_columns(conn):
            continue
        try:
            conn.execute(f"ALTER TABLE requests ADD COLUMN {name} "
                         f"{kind.replace(' NOT NULL', '')}")
        except sqlite3.OperationalError as exc:  # another process added it first
            if "duplicate column" not in str(exc):
                raise
    # After the columns: a log from before client ids has no column to index until now.
    conn.execute("CREATE INDEX IF NOT EXISTS requests_client_request_id "
                 "ON requests(client_request_id)")


def _row(record: RequestRecord) -> dict[str, Any]:
    data = json.loads(record.model_dump_json())
    row: dict[str, Any] = {}
    for name in _COLUMNS:
        if name == "ts":
            row[name] = record.time.timestamp()
        elif name in _JSON_COLUMNS:
            row[name] = None if data[name] is None else json.dumps(data[name])
        elif isinstance(data[name], bool):
            row[name] = int(data[name])
        else:
            row[name] = data[name]
    return row


def _record(row: sqlite3.Row) -> RequestRecord:
    fields = RequestRecord.model_fields
    # NULL in a column added after the row was written means "use the field's default".
    data = {k: row[k] for k in row.keys()  # noqa: SIM118
            if k in fields and (row[k] is not None or fields[k].is_required())}
    for name in _JSON_COLUMNS:
        if data.get(name) is not None:
            data[name] = json.loads(data[name])
    return RequestRecord.model_validate(data)


class RequestLog:
    """Appends to and reads `<home>/requests.sqlite`. Safe to share between threads."""

    def __init__(
        self,
        path: Path,
        *,
        retention_days: float = 90.0,
        max_rows: int = 1_000_000,
        stdout: TextIO | None = None,
    ) -> None:
        self.path = Path(path)
        self.retention_days = retention_days
        self.max_rows = max_rows
        self.stdout = stdout  # where JSON lines go, or None
        self._ready = False
        self._init_lock = threading.Lock()
        self._stdout_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._writer: sqlite3.Connection | None = None
        self._writer_pid = 0

    @classmethod
    def from_settings(cls, settings: Settings) -> RequestLog:
        return cls(settings.home / FILENAME, retention_days=settings.log_retention_days,
                   max_rows=settings.log_max_rows,
                   stdout=sys.stdout if settings.log_stdout else None)

    @contextmanager
    def _connect(self, readonly: bool = False) -> Iterator[sqlite3.Connection]:
        if readonly:
            conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True,
                                   timeout=BUSY_TIMEOUT_S)
        else:
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
            conn.execute("PRAGMA synchronous=NORMAL")  # WAL: durable at checkpoints, fast
        conn.row_factory = sqlite3.Row
        with closing(conn):
            yield conn

    def _ensure_schema(self) -> None:
        if self._ready:
            return
        with self._init_lock:
            if self._ready:
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            deadline = time.monotonic() + BUSY_TIMEOUT_S
            while True:
                try:
                    with self._connect() as conn:
                        # Switching to WAL can report "locked" without waiting when another
                        # process opens the file at the same moment: retry until the timeout.
                        conn.execute("PRAGMA journal_mode=WAL")
                        conn.executescript(_SCHEMA)
                        _add_missing_columns(conn)
                    break
                except sqlite3.OperationalError as exc:
                    if "locked" not in str(exc) or time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
            self._ready = True

    def log_answer(self, question: str, answer: Answer, authorities: Mapping[str, float], *,
                   log_question: bool = True, tenant: str | None = None) -> bool:
        """Record one answered request for `tenant` (None or "": public); never raises (the
        answer is already made)."""
        try:
            record = build_record(question, answer, authorities, log_question=log_question,
                                  tenant=tenant or "")
        except Exception as exc:
            log.warning("request %s was not logged: %s", answer.trace.request_id, exc)
            return False
        return self.append(record)

    def append(self, record: RequestRecord) -> bool:
        """Store one record (and prune by retention). False, with a warning, on failure."""
        try:
            self._ensure_schema()
            row = _row(record)
            names = ", ".join(row)
            marks = ", ".join(f":{k}" for k in row)
            with self._write_lock:
                conn = self._writer_connection()
                conn.execute("BEGIN IMMEDIATE")
                try:
                    conn.execute(f"INSERT INTO requests ({names}) VALUES ({marks})", row)
                    self._prune(conn)
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
        except (sqlite3.Error, OSError, ValueError) as exc:
            if isinstance(exc, sqlite3.Error):
                self.close()  # the next record starts on a fresh connection
            log.warning("request %s was not logged: %s", record.request_id, exc)
            return False
        if self.stdout is not None:
            line = record.model_dump_json() + "\n"
            try:
                with self._stdout_lock:
                    self.stdout.write(line)
                    self.stdout.flush()
            except (OSError, ValueError) as exc:  # a closed pipe must not fail the request
                log.warning("request %s not written to stdout: %s", record.request_id, exc)
        return True

    def _writer_connection(self) -> sqlite3.Connection:
        """The writer connection (called under `_write_lock`), opened on first use and again
        in a forked child (a connection must not cross a fork)."""
        if self._writer is None or self._writer_pid != os.getpid():
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None,
                                   check_same_thread=False)
            try:
                conn.execute("PRAGMA synchronous=NORMAL")  # WAL: durable at checkpoints, fast
            except BaseException:
                conn.close()
                raise
            self._writer, self._writer_pid = conn, os.getpid()
        return self._writer

    def close(self) -> None:
        """Close the writer connection (a later append opens a new one)."""
        with self._write_lock:
            writer, self._writer = self._writer, None
            if writer is not None and self._writer_pid == os.getpid():
                writer.close()

    def _prune(self, conn: sqlite3.Connection) -> None:
        if self.retention_days > 0:
            cutoff = time.time() - self.retention_days * 86400
            conn.execute("DELETE FROM requests WHERE ts < ?", (cutoff,))
        if self.max_rows > 0:
            conn.execute("DELETE FROM requests WHERE seq <= (SELECT max(seq) FROM requests) - ?",
                         (self.max_rows,))

    def records(
        self,
        *,
        since: dt.datetime | None = None,
        until: dt.datetime | None = None,
        degraded: bool | None = None,
        abstained: bool | None = None,
        client_request_id: str | None = None,
        limit: int | None = None,
        with_response: bool = False,
    ) -> list[RequestRecord]:
        """Records in time order (oldest first); with `limit`, the most recent ones."""
        if not self.path.is_file():
            return []
        where, params = [], []
        if since is not None:
            where.append("ts >= ?")
            params.append(since.timestamp())
        if until is not None:
            where.append("ts < ?")
            params.append(until.timestamp())
        for name, value in (("degraded", degraded), ("abstained", abstained)):
            if value is not None:
                where.append(f"{name} = ?")
                params.append(int(value))
        wanted = SUMMARY_COLUMNS + (("response",) if with_response else ())
        with self._connect(readonly=True) as conn:
            present = _table_columns(conn)
        if client_request_id is not None:
            if "client_request_id" not in present:  # a log from before client ids
                return []
            where.append("client_request_id = ?")
            params.append(client_request_id)
        columns = ", ".join(c for c in wanted if c in present)
        sql = f"SELECT {columns} FROM requests"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY ts DESC, seq DESC"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        with self._connect(readonly=True) as conn:
            rows = conn.execute(sql, params).fetchall()
        return [_record(r) for r in reversed(rows)]

    def get(self, request_id: str) -> RequestRecord | None:
        """The record with this (server) request id. Logs written before the server made
        every id may repeat one: the latest then."""
        if not self.path.is_file():
            return None
        with self._connect(readonly=True) as conn:
            columns = ", ".join(c for c in SUMMARY_COLUMNS + ("response",)
                                if c in _table_columns(conn))
            row = conn.execute(
                f"SELECT {columns} FROM requests WHERE request_id = ? ORDER BY seq DESC LIMIT 1",
                (request_id,),
            ).fetchone()
        return None if row is None else _record(row)

    def responses(self, request_id: str) -> list[dict[str, Any]]:
        """Every response recorded under this request id, latest first (`citadel verify`
        compares a saved answer with them; logs from before the server made every id may
        hold several)."""
        return self._responses(request_id, None)

    def responses_of(self, request_id: str, tenant: str | None) -> list[dict[str, Any]]:
        """`responses`, of the requests answered for `tenant` only (None or "": public
        requests): a record of another tenant, or whose tenant was not recorded, is left
        out as if there were none."""
        return self._responses(request_id, tenant or "")

    def _responses(self, request_id: str, tenant: str | None) -> list[dict[str, Any]]:
        if not self.path.is_file():
            return []
        sql = "SELECT response FROM requests WHERE request_id = ? AND response IS NOT NULL"
        params = [request_id]
        with self._connect(readonly=True) as conn:
            present = _table_columns(conn)
            if "response" not in present or (tenant is not None and "tenant" not in present):
                return []
            if tenant is not None:
                sql += " AND tenant = ?"
                params.append(tenant)
            rows = conn.execute(sql + " ORDER BY seq DESC", params).fetchall()
        return [json.loads(r[0]) for r in rows]

    def count(self) -> int:
        if not self.path.is_file():
            return 0
        with self._connect(readonly=True) as conn:
            return conn.execute("SELECT count(*) FROM requests").fetchone()[0]


_RELATIVE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$", re.I)
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_since(text: str, now: dt.datetime | None = None) -> dt.datetime:
    """`7d`, `24h`, `30m`, `2w`, `2026-12-01` or `2026-12-01T08:00` (UTC unless an offset is
    given). Raises ValueError with a message."""
    now = now or dt.datetime.now(dt.UTC)
    m = _RELATIVE.match(text)
    if m:
        return now - dt.timedelta(seconds=float(m.group(1)) * _UNIT_S[m.group(2).lower()])
    try:
        when = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(
            f"cannot read {text!r} as a time: use 7d, 24h, 30m or an ISO date like 2026-12-01"
        ) from None
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)
