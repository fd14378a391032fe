"""`citadel kb`: list, inspect, activate, roll back, delete and garbage-collect snapshots."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from citadel.config import Settings


def _embedder(settings: Settings):
    from citadel.retrieval.embedders import get_embedder

    return get_embedder(settings.embedder)  # identity only: the model is loaded lazily


@click.group()
def kb() -> None:
    """Manage knowledge-base snapshots (immutable, behind the alias `active`)."""


@kb.command("list")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def list_(as_json: bool) -> None:
    """Every snapshot: id, state, created, documents, chunks, embedder; `*` marks the active."""
    from citadel.config import Settings
    from citadel.knowledge.snapshot_admin import list_snapshots

    rows = list_snapshots(Settings.load())
    if as_json:
        click.echo(json.dumps([r.as_json() for r in rows], indent=2))
        return
    if not rows:
        click.echo("no snapshots (run `citadel ingest PATH`)")
        return
    click.echo(f"  {'ID':<19} {'STATE':<16} {'CREATED':<19} {'DOCS':>6} {'CHUNKS':>7}  EMBEDDER")
    for r in rows:
        i = r.info
        state = "building (stale)" if r.stale else i.state
        if i.state == "complete" and not r.has_data:
            state = "complete (no data)"
        click.echo(
            f"{'*' if r.active else ' '} {i.snapshot_id:<19} {state:<16} "
            f"{i.created_at[:19].replace('T', ' '):<19} {i.documents:>6} {i.chunks:>7}  "
            f"{i.embedder_name}"
        )


@kb.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def status(as_json: bool) -> None:
    """The active snapshot and whether this configuration can serve it.

    Exits 0 when ready, 1 when not (the reason is printed either way).
    """
    from citadel.config import Settings
    from citadel.knowledge.readiness import readiness
    from citadel.knowledge.snapshots import Catalog

    settings = Settings.load()
    ready = readiness(settings)
    catalog = Catalog(settings.home)
    info = catalog.get(ready.active) if ready.active else None
    manifest = catalog.manifest_path(ready.active) if ready.active else None
    if as_json:
        click.echo(json.dumps({
            "active": ready.active,
            "ready": ready.ok,
            "reason": ready.reason,
            "differences": list(ready.differences),
            "home": str(settings.home),
            "snapshot": info.model_dump(mode="json") if info else None,
            "manifest": str(manifest) if manifest and manifest.is_file() else None,
        }, indent=2))
    else:
        click.echo(f"active:  {ready.active or '(none)'}")
        if info is not None:
            click.echo(f"state:   {info.state}, {info.documents} documents, {info.chunks} chunks, "
                       f"embedder {info.embedder_name}, completed {info.completed_at or '-'}")
        if manifest is not None and manifest.is_file():
            click.echo(f"manifest: {manifest}")
        click.echo(f"ready:   {'yes' if ready.ok else 'no'} ({ready.reason})")
    if not ready.ok:
        sys.exit(1)


@kb.command("activate")
@click.argument("snapshot_id")
def activate_(snapshot_id: str) -> None:
    """Make SNAPSHOT_ID (or an unambiguous prefix) the active snapshot."""
    from citadel.config import Settings
    from citadel.knowledge.snapshot_admin import activate

    settings = Settings.load()
    done = activate(settings, snapshot_id, _embedder(settings))
    click.echo(f"active snapshot is now {done}")


@kb.command("rollback")
def rollback_() -> None:
    """Switch back to the previously active complete, compatible snapshot."""
    from citadel.config import Settings
    from citadel.knowledge.snapshot_admin import rollback

    settings = Settings.load()
    done = rollback(settings, _embedder(settings))
    click.echo(f"rolled back: active snapshot is now {done}")


@kb.command("delete")
@click.argument("snapshot_id")
@click.option("--force", is_flag=True,
              help="Delete even if a lease says a process serves it: only for a holder on "
                   "another host that you know has stopped (local holders are checked).")
def delete_(snapshot_id: str, force: bool) -> None:
    """Delete an inactive snapshot (the active one, and one a running server serves, are
    refused)."""
    from citadel.config import Settings
    from citadel.knowledge.snapshot_admin import delete

    done = delete(Settings.load(), snapshot_id, force=force)
    click.echo(f"deleted snapshot {done}")


@kb.command("gc")
@click.option("--keep", type=click.IntRange(0), default=3, show_default=True,
              help="Keep the N newest complete snapshots; the active one is always kept.")
def gc_(keep: int) -> None:
    """Delete old, failed and abandoned snapshots and leftovers; never the active one."""
    from citadel.config import Settings
    from citadel.knowledge.snapshot_admin import gc

    report = gc(Settings.load(), keep)
    for reason in report.served:
        click.echo(f"kept: {reason.removeprefix('refusing to delete ')}")
    for sid in report.deleted:
        click.echo(f"deleted snapshot {sid}")
    for path in report.removed_paths:
        click.echo(f"removed {path}")
    click.echo(f"kept {len(report.kept)} snapshot(s): {', '.join(report.kept) or '-'}")
