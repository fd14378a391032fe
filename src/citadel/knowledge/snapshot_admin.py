"""Operating on snapshots: list, activate, roll back, delete, garbage-collect.

Every switch goes through `Catalog.switch` (one transaction) after checking that the target
is complete, has its data, and matches the running configuration; a refusal names exactly
what differs. The active snapshot is never deleted, a snapshot whose build lock is held
(a live build) is never touched, and one that a live process serves (a lease, see
`citadel.knowledge.leases`) is deleted only when forced.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from citadel.config import Settings
from citadel.knowledge.build_lock import (
    LockBusy,
    build_lock,
    is_locked,
    lock_path,
    remove_lock_file,
)
from citadel.knowledge.snapshots import (
    Catalog,
    SnapshotError,
    SnapshotInfo,
    SnapshotLeased,
    incompatibilities,
    runtime_fingerprint,
)
from citadel.retrieval.backends import Backend, get_backend
from citadel.retrieval.embedders import Embedder

_STAGING = re.compile(r"^\.(kb-[0-9a-f]+)\..*\.tmp$")
_SNAPSHOT_DIR = re.compile(r"^kb-[0-9a-f]+$")


@dataclass(frozen=True)
class SnapshotRow:
    info: SnapshotInfo
    active: bool
    has_data: bool
    building_now: bool  # a live process holds its build lock
    served_by: tuple[str, ...] = ()  # live leases (`LeaseHolder.describe()`)

    @property
    def stale(self) -> bool:
        """A `building` row whose builder died (killed, crashed): safe to rebuild."""
        return self.info.state == "building" and not self.building_now

    def as_json(self) -> dict[str, object]:
        i = self.info
        return {
            "snapshot_id": i.snapshot_id, "state": i.state, "stale": self.stale,
            "active": self.active, "created_at": i.created_at, "completed_at": i.completed_at,
            "documents": i.documents, "chunks": i.chunks, "embedder": i.fingerprint.get("embedder"),
            "backend": i.backend, "has_data": self.has_data, "builder": i.builder,
            "error": i.error, "served_by": list(self.served_by),
        }


def list_snapshots(settings: Settings, backend: Backend | None = None) -> list[SnapshotRow]:
    catalog = Catalog(settings.home)
    backend = backend or get_backend(settings)
    active = catalog.alias()
    held: dict[str, list[str]] = {}
    for holder in catalog.leases():
        held.setdefault(holder.snapshot_id, []).append(holder.describe())
    return [
        SnapshotRow(
            info=info,
            active=info.snapshot_id == active,
            has_data=backend.has_snapshot(info.snapshot_id),
            building_now=info.state == "building" and is_locked(settings.home, info.snapshot_id),
            served_by=tuple(held.get(info.snapshot_id, ())),
        )
        for info in catalog.list()
    ]


def problems(
    info: SnapshotInfo | None, snapshot_id: str, embedder: Embedder, backend: Backend
) -> list[str]:
    """Why this snapshot cannot be served by the running configuration ([] if it can)."""
    if info is None:
        return [f"snapshot {snapshot_id} does not exist"]
    if info.state != "complete":
        return [f"snapshot {snapshot_id} is {info.state}, not complete"]
    diffs = incompatibilities(
        info.fingerprint, runtime_fingerprint(embedder, backend.lexical_semantics)
    )
    if diffs:
        return diffs
    if not backend.has_snapshot(snapshot_id):
        return [f"the data of snapshot {snapshot_id} is missing"]
    damaged = backend.check_snapshot(snapshot_id, info.chunks)
    return [f"the data of snapshot {snapshot_id} is damaged: {damaged}"] if damaged else []


def activate(
    settings: Settings, snapshot_id: str, embedder: Embedder, backend: Backend | None = None
) -> str:
    """Point `active` at `snapshot_id` (an id or unambiguous prefix); returns the full id."""
    catalog = Catalog(settings.home)
    backend = backend or get_backend(settings)
    snapshot_id = catalog.resolve(snapshot_id)
    found = problems(catalog.get(snapshot_id), snapshot_id, embedder, backend)
    if found:
        raise SnapshotError(f"refusing to activate {snapshot_id}: " + "; ".join(found))
    catalog.switch(snapshot_id, mirror=backend.activate)
    return snapshot_id


def rollback(settings: Settings, embedder: Embedder, backend: Backend | None = None) -> str:
    """Switch back to the most recently active snapshot before the current one that is
    complete, present and compatible. Repeating it toggles between the two latest."""
    catalog = Catalog(settings.home)
    backend = backend or get_backend(settings)
    current = catalog.alias()
    skipped: list[str] = []
    seen: set[str] = set()
    for snapshot_id in reversed(catalog.history()):
        if snapshot_id == current or snapshot_id in seen:
            continue
        seen.add(snapshot_id)
        found = problems(catalog.get(snapshot_id), snapshot_id, embedder, backend)
        if not found:
            catalog.switch(snapshot_id, mirror=backend.activate)
            return snapshot_id
        skipped.append(f"{snapshot_id}: " + "; ".join(found))
    detail = (" (skipped " + " | ".join(skipped) + ")") if skipped else ""
    raise SnapshotError(f"no earlier complete, compatible snapshot to roll back to{detail}")


def delete(
    settings: Settings, snapshot_id: str, backend: Backend | None = None, *, force: bool = False
) -> str:
    """Delete an inactive snapshot's row, data and manifest; returns the full id.

    A snapshot a live process serves is refused (SnapshotLeased, naming the holder) unless
    `force`: for a lease whose holder cannot be checked (another host) but is known gone."""
    catalog = Catalog(settings.home)
    backend = backend or get_backend(settings)
    snapshot_id = catalog.resolve(snapshot_id)
    try:
        # Holding its build lock keeps an ingest from rebuilding it while we delete.
        with build_lock(settings.home, snapshot_id, wait=False):
            catalog.forget(snapshot_id, ignore_leases=force)  # refuses the active and a
            # leased one, atomically
            _remove_data(catalog, backend, snapshot_id)
    except LockBusy as exc:
        raise SnapshotError(f"refusing to delete {snapshot_id}: {exc}") from None
    remove_lock_file(settings.home, snapshot_id)
    return snapshot_id


def _remove_data(catalog: Catalog, backend: Backend, snapshot_id: str) -> None:
    backend.delete_snapshot(snapshot_id)
    shutil.rmtree(catalog.snapshot_dir(snapshot_id), ignore_errors=True)


@dataclass(frozen=True)
class GcReport:
    deleted: tuple[str, ...]
    kept: tuple[str, ...]
    removed_paths: tuple[str, ...]
    served: tuple[str, ...] = ()  # kept because a live process serves them: the reasons


def gc(settings: Settings, keep: int, backend: Backend | None = None) -> GcReport:
    """Keep the active snapshot and the `keep` newest complete ones; delete the rest
    (older complete, failed, and stale building snapshots), then leftover staging
    directories, data without a catalog row, and unused lock files. Live builds and
    snapshots a live process serves (leases) are skipped; gc never forces.
    """
    if keep < 0:
        raise SnapshotError("--keep must be 0 or more")
    catalog = Catalog(settings.home)
    backend = backend or get_backend(settings)
    rows = list_snapshots(settings, backend)
    complete = sorted((r for r in rows if r.info.state == "complete"),
                      key=lambda r: r.info.completed_at or r.info.created_at, reverse=True)
    kept = {r.info.snapshot_id for r in complete[:keep]} | {
        r.info.snapshot_id for r in rows if r.active or r.building_now
    }
    deleted: list[str] = []
    served: list[str] = []
    for row in rows:
        sid = row.info.snapshot_id
        if sid in kept:
            continue
        try:
            delete(settings, sid, backend)
        except SnapshotLeased as exc:
            kept.add(sid)
            served.append(str(exc))
            continue
        except SnapshotError:
            kept.add(sid)  # became active or started building meanwhile
            continue
        deleted.append(sid)
    removed = _remove_orphans(settings.home, catalog, backend)
    return GcReport(tuple(deleted), tuple(sorted(kept)), tuple(removed), tuple(served))


def _remove_orphans(home: Path, catalog: Catalog, backend: Backend) -> list[str]:
    known = {s.snapshot_id for s in catalog.list()}
    removed: list[str] = []
    root = home / "snapshots"
    for path in sorted(root.iterdir()) if root.is_dir() else []:
        staging = _STAGING.match(path.name)
        if not staging and not _SNAPSHOT_DIR.match(path.name):
            continue  # not ours
        owner = staging.group(1) if staging else path.name
        if owner in known and not staging:
            continue
        try:
            with build_lock(home, owner, wait=False):
                if not staging and catalog.get(owner) is not None:
                    continue  # recorded meanwhile
                if staging:
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    _remove_data(catalog, backend, owner)
        except LockBusy:
            continue  # its build is running
        removed.append(str(path))
    locks = home / "locks"
    for path in sorted(locks.glob("*.lock")) if locks.is_dir() else []:
        sid = path.name.removesuffix(".lock")
        if not _SNAPSHOT_DIR.match(sid):
            continue  # not a snapshot's (the change lock, `build_lock.change_lock`)
        if sid not in known and lock_path(home, sid) == path and remove_lock_file(home, sid):
            removed.append(str(path))
    return removed
