"""Leases: a process serving a snapshot holds one, so `kb delete` and `kb gc` leave it alone.

A lease is a row of the catalog (`leases`: snapshot, pid, host, the process's start time,
what holds it). It is taken in the same transaction that checks the snapshot is still
there, and `Catalog.forget` checks leases in the transaction that deletes the row, so a
delete and a server opening the snapshot cannot both win. A process that dies (kill -9
included) leaves its row behind; such a row is ignored and pruned: its pid is gone, or now
belongs to a process that started at another time (pid reuse). A lease from another host
(a shared CITADEL_HOME) cannot be checked that way and counts as held.
"""

from __future__ import annotations

import datetime as dt
import os
import socket
import sqlite3
import uuid
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict

TABLE = """CREATE TABLE IF NOT EXISTS leases (
    token TEXT PRIMARY KEY, snapshot_id TEXT NOT NULL, pid INTEGER NOT NULL,
    host TEXT NOT NULL, started TEXT, purpose TEXT NOT NULL, acquired_at TEXT NOT NULL)"""
_COLUMNS = "token, snapshot_id, pid, host, started, purpose, acquired_at"


class LeaseHolder(BaseModel):
    model_config = ConfigDict(frozen=True)

    token: str
    snapshot_id: str
    pid: int
    host: str
    started: str | None = None  # the process's start time (Linux clock ticks since boot)
    purpose: str
    acquired_at: str

    def alive(self) -> bool:
        """Is the holding process still running? (Another host's: assumed so.)"""
        if self.host != socket.gethostname():
            return True
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass  # exists, owned by another user
        return self.started is None or process_start(self.pid) in (None, self.started)

    def describe(self) -> str:
        return (f"pid {self.pid} on {self.host} ({self.purpose}, since "
                f"{self.acquired_at[:19].replace('T', ' ')} UTC)")


def process_start(pid: int) -> str | None:
    """Start time of a process, to tell it from a later one with the same pid (None where
    /proc is not available)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # Field 22 (starttime); the command name (field 2) may hold spaces, so split after it.
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else None


def this_process(snapshot_id: str, purpose: str) -> LeaseHolder:
    pid = os.getpid()
    return LeaseHolder(token=uuid.uuid4().hex, snapshot_id=snapshot_id, pid=pid,
                       host=socket.gethostname(), started=process_start(pid), purpose=purpose,
                       acquired_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"))


def insert(db: sqlite3.Connection, holder: LeaseHolder) -> None:
    db.execute(f"INSERT INTO leases ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
               (holder.token, holder.snapshot_id, holder.pid, holder.host, holder.started,
                holder.purpose, holder.acquired_at))


def remove(db: sqlite3.Connection, token: str) -> None:
    db.execute("DELETE FROM leases WHERE token=?", (token,))


def live_holders(db: sqlite3.Connection, snapshot_id: str | None = None) -> list[LeaseHolder]:
    """The live leases (of one snapshot, or all); rows of dead processes are pruned when the
    connection is in a write transaction, and skipped either way."""
    sql = f"SELECT {_COLUMNS} FROM leases"
    rows = db.execute(sql + " WHERE snapshot_id=?" if snapshot_id else sql,
                      (snapshot_id,) if snapshot_id else ()).fetchall()
    holders = [LeaseHolder(token=r[0], snapshot_id=r[1], pid=r[2], host=r[3], started=r[4],
                           purpose=r[5], acquired_at=r[6]) for r in rows]
    live = [h for h in holders if h.alive()]
    if db.in_transaction:
        for dead in (h for h in holders if h not in live):
            remove(db, dead.token)
    return live


class SnapshotLease:
    """A held lease; `release()` (idempotent) gives it back."""

    def __init__(self, holder: LeaseHolder, release: Callable[[str], None]) -> None:
        self.holder = holder
        self._release = release
        self._released = False

    @property
    def snapshot_id(self) -> str:
        return self.holder.snapshot_id

    def release(self) -> None:
        if not self._released:
            self._released = True
            self._release(self.holder.token)
