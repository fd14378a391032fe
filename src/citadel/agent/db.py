"""Connections to the business database: embedded SQLite by default, PostgreSQL when configured.

Both sit behind one small interface: `transaction()` yields a `Tx` whose `one`/`all`/`execute`
take SQL with `:name` placeholders and a parameter dict. Values only ever travel as bound
parameters; no caller formats a value into SQL text. Any connection-level failure becomes
`BusinessUnavailable`, which the agent turns into "I can't check your order right now".
"""

from __future__ import annotations

import datetime as dt
import queue
import re
import sqlite3
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from citadel.knowledge.sqlite_wal import enable_wal

Dialect = Literal["sqlite", "postgres"]
Row = dict[str, Any]

_CONNINFO = re.compile(r"^\s*(host|hostaddr|dbname|user|port|service)\s*=")  # libpq key=value
_NAMED = re.compile(r"(?<![:\w]):([a-z_][a-z0-9_]*)")


class BusinessUnavailable(RuntimeError):
    """The business database cannot be reached or used right now."""


class Conflict(RuntimeError):
    """A uniqueness constraint rejected a write (e.g. a concurrent refund for the same key)."""


class Tx(ABC):
    """One open transaction. Commits when its `transaction()` block exits normally."""

    dialect: Dialect

    @abstractmethod
    def execute(self, sql: str, params: Mapping[str, Any] | None = None) -> int:
        """Run a statement; returns the number of rows affected."""

    @abstractmethod
    def all(self, sql: str, params: Mapping[str, Any] | None = None) -> list[Row]: ...

    def one(self, sql: str, params: Mapping[str, Any] | None = None) -> Row | None:
        rows = self.all(sql, params)
        return rows[0] if rows else None

    @property
    def for_update(self) -> str:
        """Row-lock suffix for SELECTs: PostgreSQL locks rows; SQLite holds the write lock."""
        return " FOR UPDATE" if self.dialect == "postgres" else ""


class BusinessDB(ABC):
    dialect: Dialect
    description: str

    @abstractmethod
    @contextmanager
    def transaction(self, *, write: bool = False) -> Iterator[Tx]:
        """A transaction; `write=True` takes the write lock up front (SQLite) so that checks
        and the write that depends on them cannot interleave with another writer."""

    def close(self) -> None:  # noqa: B027 - optional hook
        pass


# --- SQLite -------------------------------------------------------------------------------


def _sqlite_param(value: Any) -> Any:
    # sqlite3's implicit datetime adapter is deprecated; store ISO-8601 text explicitly.
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    return value


class _SqliteTx(Tx):
    dialect: Dialect = "sqlite"

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def _params(self, params: Mapping[str, Any] | None) -> dict[str, Any]:
        return {k: _sqlite_param(v) for k, v in (params or {}).items()}

    def execute(self, sql: str, params: Mapping[str, Any] | None = None) -> int:
        try:
            return self._conn.execute(sql, self._params(params)).rowcount
        except sqlite3.IntegrityError as exc:
            if "UNIQUE" in str(exc):
                raise Conflict(str(exc)) from exc
            raise

    def all(self, sql: str, params: Mapping[str, Any] | None = None) -> list[Row]:
        cur = self._conn.execute(sql, self._params(params))
        names = [d[0] for d in cur.description or ()]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


class SqliteBusinessDB(BusinessDB):
    """One file. Each transaction borrows a connection that no other thread uses meanwhile;
    idle connections are kept (closing the last one would checkpoint the WAL every time)."""

    dialect: Dialect = "sqlite"

    def __init__(self, path: Path, *, busy_timeout_s: float = 30.0, max_idle: int = 8) -> None:
        self.path = Path(path)
        self.description = f"sqlite:{self.path}"
        self._busy_timeout_s = busy_timeout_s
        self._idle: queue.LifoQueue[sqlite3.Connection] = queue.LifoQueue(maxsize=max_idle)
        # Writers in this process queue here instead of in SQLite's sleep-and-retry busy
        # handler; other processes are still serialized by SQLite's own lock.
        self._write_lock = threading.Lock()

    def _connect(self) -> sqlite3.Connection:
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            pass
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=self._busy_timeout_s, isolation_level=None,
                               check_same_thread=False)
        try:
            conn.execute("PRAGMA foreign_keys = ON")
            enable_wal(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def _release(self, conn: sqlite3.Connection, healthy: bool) -> None:
        if healthy and not conn.in_transaction:
            try:
                self._idle.put_nowait(conn)
                return
            except queue.Full:
                pass
        conn.close()

    @contextmanager
    def transaction(self, *, write: bool = False) -> Iterator[Tx]:
        if not write:
            with self._transaction(write=False) as tx:
                yield tx
            return
        with self._write_lock, self._transaction(write=True) as tx:
            yield tx

    @contextmanager
    def _transaction(self, *, write: bool) -> Iterator[Tx]:
        try:
            conn = self._connect()
        except (sqlite3.OperationalError, sqlite3.DatabaseError, OSError) as exc:
            raise BusinessUnavailable(f"business database {self.path}: {exc}") from exc
        healthy = False
        try:
            try:
                conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            except sqlite3.DatabaseError as exc:
                raise BusinessUnavailable(f"business database {self.path}: {exc}") from exc
            try:
                yield _SqliteTx(conn)
            except BaseException:
                conn.execute("ROLLBACK")
                healthy = True
                raise
            conn.execute("COMMIT")
            healthy = True
        except sqlite3.IntegrityError:
            raise
        except (sqlite3.OperationalError, sqlite3.DatabaseError) as exc:
            healthy = False
            raise BusinessUnavailable(f"business database {self.path}: {exc}") from exc
        finally:
            self._release(conn, healthy)

    def close(self) -> None:
        while True:
            try:
                self._idle.get_nowait().close()
            except queue.Empty:
                return


# --- PostgreSQL ---------------------------------------------------------------------------


def to_pyformat(sql: str) -> str:
    """`:name` placeholders to psycopg's `%(name)s` (casts such as `::text` are left alone)."""
    if "%" in sql:
        raise ValueError("literal '%' in SQL: bind it as a parameter instead")
    return _NAMED.sub(r"%(\1)s", sql)


class _PostgresTx(Tx):
    dialect: Dialect = "postgres"

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    def execute(self, sql: str, params: Mapping[str, Any] | None = None) -> int:
        from psycopg import errors

        try:
            with self._conn.cursor() as cur:
                cur.execute(to_pyformat(sql), dict(params or {}))
                return cur.rowcount
        except errors.UniqueViolation as exc:
            raise Conflict(str(exc)) from exc

    def all(self, sql: str, params: Mapping[str, Any] | None = None) -> list[Row]:
        with self._conn.cursor() as cur:
            cur.execute(to_pyformat(sql), dict(params or {}))
            if cur.description is None:
                return []
            names = [d.name for d in cur.description]
            return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


class PostgresBusinessDB(BusinessDB):
    """A small connection pool; each transaction borrows one connection."""

    dialect: Dialect = "postgres"

    def __init__(self, dsn: str, *, max_size: int = 10, timeout_s: float = 10.0) -> None:
        try:
            import psycopg  # noqa: F401
            from psycopg_pool import ConnectionPool
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise BusinessUnavailable(
                "PostgreSQL support needs psycopg: pip install 'citadel[postgres]'"
            ) from exc
        self.description = "postgres:" + _redact(dsn)
        self._timeout_s = timeout_s
        self._pool = ConnectionPool(
            dsn, min_size=1, max_size=max_size, timeout=timeout_s, open=False,
            kwargs={"connect_timeout": max(1, int(timeout_s))},
            name="citadel-business",
        )
        # Do not wait for the first connection: an outage must surface per request as
        # BusinessUnavailable, not as a failure to construct the agent.
        self._pool.open(wait=False)

    @contextmanager
    def transaction(self, *, write: bool = False) -> Iterator[Tx]:
        import psycopg
        from psycopg_pool import PoolTimeout

        try:
            with self._pool.connection(timeout=self._timeout_s) as conn, conn.transaction():
                yield _PostgresTx(conn)
        except (psycopg.OperationalError, PoolTimeout) as exc:
            raise BusinessUnavailable(f"business database {self.description}: {exc}") from exc

    def close(self) -> None:
        self._pool.close()


def _redact(dsn: str) -> str:
    dsn = re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", dsn)
    return re.sub(r"(password\s*=\s*)('[^']*'|\S+)", r"\1***", dsn)


def open_business_db(dsn: str | None, home: Path) -> BusinessDB:
    """`postgresql://...` or libpq `key=value` ⇒ PostgreSQL; `sqlite:///path` or a path ⇒
    SQLite; None ⇒ the embedded default `<home>/business.sqlite`."""
    if not dsn:
        return SqliteBusinessDB(Path(home) / "business.sqlite")
    if dsn.startswith(("postgresql://", "postgres://")) or _CONNINFO.match(dsn):
        return PostgresBusinessDB(dsn)
    if dsn.startswith("sqlite:///"):
        return SqliteBusinessDB(Path(dsn.removeprefix("sqlite:///")))
    if "://" in dsn:
        raise ValueError(f"unsupported business database {_redact(dsn)!r}: use postgresql:// "
                         "or sqlite:///path")
    return SqliteBusinessDB(Path(dsn))
