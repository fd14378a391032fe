"""Readiness: is the snapshot this process serves complete, compatible and still active?

Kept to one function so a catalog-level `readiness()` from `citadel.knowledge.snapshots` can replace
its body without touching the routes. It reports what is served (`snapshot_id`) next to what
is active, and, when they differ, why (a switch pending, or the new snapshot not ready).

`/readyz` answers anyone (a health checker has no key), so the number of documents it gives
is the number the caller may see: public documents, plus its tenant's with its key
(`DocumentCounts`). The catalog's total would tell anyone that private documents exist, and
how many.
"""

from __future__ import annotations

import threading
from collections import Counter

from citadel.engine import Engine
from citadel.knowledge.snapshots import Catalog, incompatibilities, runtime_fingerprint
from citadel.retrieval.backends import lexical_semantics
from citadel.retrieval.tenancy import visible
from citadel.server.models import Readiness
from citadel.server.public_errors import public_message


class DocumentCounts:
    """How many of a snapshot's documents are public and how many each tenant holds, read
    once per snapshot (its manifest lists the documents; each document names its tenant)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._snapshot: str | None = None
        self._owners: Counter[str | None] = Counter()

    def visible_to(self, engine: Engine, tenant: str | None) -> int | None:
        """Documents of `engine`'s snapshot that `tenant` (None: public only) may see; None
        when the snapshot's document list cannot be read."""
        snapshot = engine.index.snapshot_id
        with self._lock:  # one reader per snapshot; the others wait for its count
            if self._snapshot != snapshot:
                owners = _owners(engine)
                if owners is None:
                    return None
                self._snapshot, self._owners = snapshot, owners
            return sum(n for owner, n in self._owners.items() if visible(owner, tenant))


def _owners(engine: Engine) -> Counter[str | None] | None:
    owners: Counter[str | None] = Counter()
    try:
        manifest = Catalog(engine.settings.home).read_manifest(engine.index.snapshot_id)
        for entry in manifest.documents if manifest is not None else ():
            document = engine.index.get_document(entry.document_id)
            owners[document.tenant if document is not None else None] += 1
    except Exception:  # unreadable: no count, and the rest of readiness says what is wrong
        return None
    return owners if manifest is not None else None


def readiness(engine: Engine, switch_problem: str | None = None, *,
              documents: int | None = None) -> Readiness:
    """`switch_problem`: why the server could not switch to the active snapshot, if it tried
    (`EngineProvider.switch_problem`); `documents`: how many the caller may see."""
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
    base["documents"] = documents
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
