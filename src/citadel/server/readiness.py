"""Readiness: is the snapshot this process serves complete, compatible and still active?

Kept to one function so a catalog-level `readiness()` from `citadel.knowledge.snapshots` can replace
its body without touching the routes. It reports what is served (`snapshot_id`) next to what
is active, and, when they differ, why (a switch pending, or the new snapshot not ready).
"""

from __future__ import annotations

from citadel.engine import Engine
from citadel.knowledge.snapshots import Catalog, incompatibilities, runtime_fingerprint
from citadel.retrieval.backends import lexical_semantics
from citadel.server.models import Readiness
from citadel.server.public_errors import public_message


def readiness(engine: Engine, switch_problem: str | None = None) -> Readiness:
    """`switch_problem`: why the server could not switch to the active snapshot, if it tried
    (`EngineProvider.switch_problem`)."""
    serving = engine.index.snapshot_id
    base = {"snapshot_id": serving, "backend": engine.index.backend}
    catalog = Catalog(engine.settings.home)
    try:
        active = catalog.alias()
        info = catalog.get(serving)
    except Exception as exc:  # an unreadable catalog is a reason, not a crash
        reason = public_message(f"catalog unreadable: {exc}", engine.settings.home)
        return Readiness(ready=False, reason=reason, **base)
    base["active_snapshot_id"] = active
    base["serving_active"] = active == serving
    if info is None:
        return Readiness(ready=False, reason=f"snapshot {serving} is not in the catalog", **base)
    base["documents"] = info.documents
    base["updated_at"] = info.completed_at
    if info.state != "complete":
        return Readiness(ready=False, reason=f"snapshot {serving} is {info.state}", **base)
    runtime = runtime_fingerprint(engine.embedder, lexical_semantics(engine.settings))
    diffs = incompatibilities(info.fingerprint, runtime)
    if diffs:
        return Readiness(ready=False, reason=f"snapshot {serving} does not match the running "
                         "configuration: " + "; ".join(diffs), **base)
    if active != serving:
        why = (f"{switch_problem}; still serving {serving}" if switch_problem else
               f"serving {serving} but the active snapshot is {active}: a server that opened "
               "its own engine switches at its next alias check (snapshot_check_seconds); one "
               "handed an engine must be restarted to serve it")
        return Readiness(ready=False, reason=why, **base)
    return Readiness(ready=True, **base)
