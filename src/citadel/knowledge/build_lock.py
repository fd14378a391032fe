"""Build locks: one advisory file lock per snapshot id under `<home>/locks/`.

Two ingests of the same corpus never write the same snapshot at once: the second waits, then
finds the snapshot complete and reuses it. The kernel drops a `flock` when its process exits,
even on SIGKILL, so a `building` row whose lock is free was left by a builder that died and
may be rebuilt. Lock files are tiny and kept; the inode check below makes it safe for `gc` to
remove one while someone else is opening it.
"""

from __future__ import annotations

import fcntl
import os
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


class LockBusy(RuntimeError):
    """The lock is held by another builder (message names it)."""


def lock_path(home: Path, snapshot_id: str) -> Path:
    return home / "locks" / f"{snapshot_id}.lock"


def builder_identity() -> str:
    """Who builds: recorded in the catalog and the lock file, shown by `citadel kb list`."""
    return f"pid {os.getpid()} on {socket.gethostname()}"


def _holder(path: Path) -> str:
    try:
        return path.read_text().strip() or "another process"
    except OSError:
        return "another process"


@contextmanager
def build_lock(
    home: Path,
    snapshot_id: str,
    *,
    wait: bool = True,
    on_wait: Callable[[str], None] | None = None,
) -> Iterator[None]:
    """Hold the build lock of `snapshot_id`. Blocks while another builder holds it (or raises
    `LockBusy` when `wait` is false); `on_wait` is told who holds it before blocking."""
    with _exclusive(lock_path(home, snapshot_id), f"snapshot {snapshot_id} is being built",
                    wait, on_wait):
        yield


# The lock of changes to what the knowledge base is built from (`change_lock`); not a snapshot
# id, so `gc` leaves its file alone.
CHANGE_LOCK = "sources"


@contextmanager
def change_lock(
    home: Path, *, wait: bool = True, on_wait: Callable[[str], None] | None = None,
) -> Iterator[None]:
    """One change of the knowledge base's sources at a time: an ingest, or a document added
    or removed (`citadel.ingest.managed`). Each reads what the active snapshot was built from
    and builds the next one from it; two at once would each drop the other's change."""
    with _exclusive(home / "locks" / f"{CHANGE_LOCK}.lock",
                    "the knowledge base is being changed", wait, on_wait):
        yield


@contextmanager
def _exclusive(path: Path, busy: str, wait: bool,
               on_wait: Callable[[str], None] | None) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _holder(path)
                if not wait:
                    raise LockBusy(f"{busy} by {holder}") from None
                if on_wait is not None:
                    on_wait(holder)
                fcntl.flock(fd, fcntl.LOCK_EX)
            # The file may have been removed (gc) between open and flock: lock the new one.
            try:
                same = os.fstat(fd).st_ino == os.stat(path).st_ino
            except FileNotFoundError:
                same = False
            if not same:
                continue
            os.ftruncate(fd, 0)
            os.write(fd, builder_identity().encode())
            yield
            return
        finally:
            os.close(fd)  # closing releases the lock


def is_locked(home: Path, snapshot_id: str) -> bool:
    """True while a live process holds the build lock of `snapshot_id`."""
    path = lock_path(home, snapshot_id)
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def remove_lock_file(home: Path, snapshot_id: str) -> bool:
    """Remove an unheld lock file (gc). Returns False when a builder holds it."""
    path = lock_path(home, snapshot_id)
    try:
        with build_lock(home, snapshot_id, wait=False):
            path.unlink(missing_ok=True)
    except LockBusy:
        return False
    return True
