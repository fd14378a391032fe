"""Readiness: is the snapshot this process serves complete, compatible and still active?

Kept to one function so a catalog-level `readiness()` from `citadel.knowledge.snapshots` can replace
its body without touching the routes.
"""

from __future__ import annotations

from citadel.engine import Engine
from citadel.knowledge.snapshots import Catalog, incompatibilities, runtime_fingerprint
from citadel.retrieval.backends import lexical_semantics
from citadel.server.models import Readiness
from citadel.server.public_errors import public_message


def readiness(engine: Engine) -> Readiness:
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
    if info is None:
        return Readiness(ready=False, reason=f"snapshot {serving} is not in the catalog", **base)
    if info.state != "complete":
        return Readiness(ready=False, reason=f"snapshot {serving} is {info.state}", **base)
    runtime = runtime_fingerprint(engine.embedder, lexical_semantics(engine.settings))
    diffs = incompatibilities(info.fingerprint, runtime)
    if diffs:
        return Readiness(ready=False, reason=f"snapshot {serving} does not match the running "
                         "configuration: " + "; ".join(diffs), **base)
    if active != serving:
        return Readiness(ready=False, reason=f"serving {serving} but the active snapshot is "
                         f"{active}: restart the server to serve it", **base)
    return Readiness(ready=True, **base)
