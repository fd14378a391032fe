"""The app's engine: the snapshot a running server serves, and how it follows `active`.

A server started before anything was ingested still starts: `/readyz` says why it is not
ready and answer endpoints return 503 until an engine can be opened.

While it serves a snapshot the process holds a lease on it (`citadel.knowledge.leases`), so
`kb delete`/`kb gc` cannot remove it underneath. An engine the provider opened itself follows
the alias: at most every `snapshot_check_seconds` it reads the alias (one small SQLite
query); when `active` points elsewhere it opens the new snapshot (through `Engine.open`, so
the same readiness checks apply), leases it and swaps it in with one assignment. The old
engine keeps serving requests that already hold it and is closed, and its lease released,
`snapshot_drain_seconds` later. A new active snapshot that is not ready is not served: the old
one stays, and `switch_problem` says why (shown by `/readyz`). An engine handed in by the
caller is served as it is (it is the caller's to close and to replace).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from citadel.config import Settings
from citadel.engine import Engine, NotReady
from citadel.knowledge.leases import SnapshotLease
from citadel.knowledge.snapshots import Catalog, SnapshotError

T = TypeVar("T")
log = logging.getLogger("citadel.http")

# A new active snapshot that failed to open is retried this often while the alias stays put
# (it may have been incomplete for a moment, or a model was missing), not on every check.
RETRY_FAILED_SECONDS = 30.0
LEASE_PURPOSE = "citadel HTTP server"

Opener = Callable[[Settings, Engine | None], Engine]


def open_active(settings: Settings, previous: Engine | None) -> Engine:
    """Open the active snapshot; reuse the previous engine's embedder and generator (loaded
    models; a local generator's model server keeps running across the switch)."""
    if previous is None:
        return Engine.open(settings)
    engine = Engine.open(settings, embedder=previous.embedder, generator=previous.generator)
    previous.hand_over(engine)
    return engine


@dataclass
class _Served:
    engine: Engine
    lease: SnapshotLease | None
    owned: bool  # close only what we opened
    retired: bool = False

    @property
    def snapshot_id(self) -> str:
        return self.engine.index.snapshot_id

    def retire(self) -> None:
        """Close (if ours) and release the lease; once, whoever calls first (a drain timer
        or shutdown)."""
        if self.retired:
            return
        self.retired = True
        try:
            if self.owned:
                self.engine.close()
        finally:
            if self.lease is not None:
                self.lease.release()


@dataclass(frozen=True)
class _Failed:
    snapshot_id: str | None
    reason: str
    at: float


class EngineProvider:
    def __init__(
        self,
        settings: Settings,
        engine: Engine | None = None,
        opener: Opener = open_active,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = engine.settings if engine is not None else settings
        self._opener = opener
        self._clock = clock
        self._lock = threading.Lock()
        self._served: _Served | None = None
        self._follows_alias = engine is None
        self._checked_at = float("-inf")
        self._failed: _Failed | None = None
        self._draining: list[threading.Timer] = []
        # A caller's engine is leased when first served, not when the app is built: an app
        # that is never run must not pin its snapshot.
        self._lease_pending = engine is not None
        if engine is not None:
            self._served = _Served(engine, None, owned=False)
        # With the extractive generator engine work is CPU-bound (embedding, scoring): running
        # more of it at once than there are cores only adds contention and a long latency
        # tail, so extra requests wait here (settings.max_concurrent_answers, 0 = per CPU).
        slots = self.settings.max_concurrent_answers or os.cpu_count() or 2
        self._slots = threading.BoundedSemaphore(slots)

    def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run blocking engine work (in a worker thread) once a slot is free."""
        with self._slots:
            return fn(*args, **kwargs)

    def current(self) -> Engine | None:
        """The served engine when `get` would return it without any work (no alias check
        due, nothing to lease), else None: then call `get` (it may block)."""
        served = self._served
        if served is not None and not self._check_due() and not self._lease_pending:
            return served.engine
        return None

    def get(self) -> Engine:
        """The engine to serve this request with, switching to a newly active snapshot when
        one is due. Raises NotReady with the reason when nothing can be served."""
        served = self._served
        if served is not None and not self._check_due() and not self._lease_pending:
            return served.engine
        with self._lock:
            if self._lease_pending and self._served is not None:
                self._lease_pending = False
                self._served.lease = self._lease_given(self._served.engine)
            if self._served is None or self._check_due():
                self._refresh()
            if self._served is None:
                raise NotReady(self._failed.reason if self._failed else "no engine")
            return self._served.engine

    def check_now(self) -> None:
        """Read the alias now, not at the next due check: after this process activated a
        snapshot (a document change), the next request is served by it. Nothing changes for
        an engine handed in (it does not follow the alias); a snapshot that cannot be served
        is left to `switch_problem`, as at any check."""
        self._checked_at = float("-inf")
        with contextlib.suppress(NotReady):
            self.get()

    def peek(self) -> Engine | None:
        served = self._served
        return served.engine if served else None

    @property
    def switch_problem(self) -> str | None:
        """Why the snapshot now active is not the one served (it failed to open), or None."""
        failed, served = self._failed, self._served
        if failed is None or served is None or failed.snapshot_id == served.snapshot_id:
            return None
        return f"the active snapshot {failed.snapshot_id} is not ready: {failed.reason}"

    def close(self) -> None:
        with self._lock:
            for timer in self._draining:
                timer.cancel()
                self._retire(*timer.args)  # now: the process is stopping
            self._draining.clear()
            if self._served is not None:
                self._served.retire()
                self._served = None

    def _check_due(self) -> bool:
        if self._served is None:
            return True
        if not self._follows_alias:
            return False
        return self._clock() - self._checked_at >= self.settings.snapshot_check_seconds

    def _refresh(self) -> None:
        """Open the active snapshot if it is not the one served (called under the lock)."""
        now = self._clock()
        self._checked_at = now
        current = self._served
        if current is not None:
            try:
                active = Catalog(self.settings.home).alias()
            except Exception as exc:  # an unreadable catalog: keep serving what we have
                self._failed = _Failed(None, f"catalog unreadable: {exc}", now)
                return
            if active == current.snapshot_id:
                self._failed = None
                return
            failed = self._failed
            if (failed is not None and failed.snapshot_id == active
                    and now - failed.at < RETRY_FAILED_SECONDS):
                return
        else:
            active = None
        try:
            engine = self._opener(self.settings, current.engine if current else None)
        except Exception as exc:  # bad snapshot, config, model...: not served, say why
            reason = str(exc) if isinstance(exc, NotReady) else f"{type(exc).__name__}: {exc}"
            self._failed = _Failed(active, reason, now)
            if current is not None:
                log.warning("still serving %s: %s", current.snapshot_id, self.switch_problem)
            return
        try:
            lease = self._lease(engine)
        except NotReady as exc:
            engine.close()
            self._failed = _Failed(engine.index.snapshot_id, str(exc), now)
            return
        self._failed = None
        self._served = _Served(engine, lease, owned=True)
        if current is not None:
            log.info("switched from snapshot %s to %s", current.snapshot_id,
                     engine.index.snapshot_id)
            self._drain(current)

    def _lease(self, engine: Engine) -> SnapshotLease | None:
        """Lease the engine's snapshot; NotReady if it was deleted meanwhile."""
        try:
            return Catalog(engine.settings.home).lease(engine.index.snapshot_id, LEASE_PURPOSE)
        except SnapshotError as exc:
            raise NotReady(str(exc)) from None

    def _lease_given(self, engine: Engine) -> SnapshotLease | None:
        """A caller's engine is leased when its catalog exists; one built over a test index
        (no catalog) is served without (`/readyz` then says the snapshot is unknown)."""
        if not Catalog(engine.settings.home).path.is_file():
            return None
        try:
            return self._lease(engine)
        except NotReady:
            return None

    def _drain(self, old: _Served) -> None:
        """Close the old engine once requests that hold it have had time to finish."""
        timer = threading.Timer(self.settings.snapshot_drain_seconds, self._retire, (old,))
        timer.daemon = True
        self._draining = [t for t in self._draining if t.is_alive()] + [timer]
        timer.start()

    def _retire(self, old: _Served) -> None:
        try:
            old.retire()
        except Exception as exc:  # closing must not take the server down
            log.warning("closing snapshot %s failed: %s", old.snapshot_id, exc)
