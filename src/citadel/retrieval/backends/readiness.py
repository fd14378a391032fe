"""Readiness of a backend's own alias: does the engine agree with the catalog?"""

from __future__ import annotations

from citadel.retrieval.backends.base import Backend, RetrievalError


def alias_mismatch(backend: Backend, snapshot_id: str) -> str | None:
    """Why the engine's alias disagrees with the catalog's active snapshot, or None.

    An unreachable engine is not a mismatch: each request then reports a retrieval failure
    (bounded fallback) and health checks say why, rather than refusing to start.
    """
    if not backend.mirrors_alias:
        return None
    try:
        mirrored = backend.engine_alias()
    except RetrievalError:
        return None
    if mirrored == snapshot_id:
        return None
    return (
        f"the {backend.name} alias points at {mirrored or 'nothing'} but the catalog's active "
        f"snapshot is {snapshot_id}: activate it again (e.g. re-run `citadel ingest`)"
    )
