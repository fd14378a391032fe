"""Readiness: can this configuration serve the active snapshot?

One function answers it for every surface: `Engine.open` refuses to start when it is not ok,
`citadel kb status` prints it, and an HTTP readiness probe can return it as JSON. It never
loads a model: only the embedder's identity is compared.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from citadel.config import ConfigError, Settings
from citadel.knowledge.snapshots import Catalog, incompatibilities, runtime_fingerprint
from citadel.retrieval import ann
from citadel.retrieval.backends import Backend, RetrievalError, get_backend
from citadel.retrieval.embedders import Embedder, EmbedderUnavailable, get_embedder


class Readiness(BaseModel):
    """`ok` with the snapshot it would serve, or not ok with the reason (one line)."""

    model_config = ConfigDict(frozen=True)

    ok: bool
    reason: str
    active: str | None = None
    state: str | None = None
    differences: tuple[str, ...] = ()
    backend_unreachable: bool = False


def readiness(
    settings: Settings, embedder: Embedder | None = None, backend: Backend | None = None
) -> Readiness:
    """Check the active snapshot against the running configuration.

    Not ready when there is no active snapshot, when it is not complete, when its data is
    missing or damaged (`Backend.check_snapshot`), or when its fingerprint differs from what
    this configuration would query it with (embedder, dense/sparse schema, lexical
    semantics, knowledge schema version).
    """
    catalog = Catalog(settings.home)
    snapshot_id = catalog.alias()
    if snapshot_id is None:
        return Readiness(
            ok=False,
            reason=f"no active knowledge base in {settings.home}: run `citadel ingest PATH` first",
        )
    info = catalog.get(snapshot_id)
    if info is None or info.state != "complete":
        state = info.state if info else "missing from the catalog"
        return Readiness(ok=False, active=snapshot_id, state=state,
                         reason=f"active snapshot {snapshot_id} is not complete ({state})")
    try:
        embedder = embedder or get_embedder(settings.embedder)
        backend = backend or get_backend(settings)
    except (EmbedderUnavailable, ConfigError) as exc:
        return Readiness(ok=False, active=snapshot_id, state=info.state, reason=str(exc))
    diffs = incompatibilities(
        info.fingerprint, runtime_fingerprint(embedder, backend.lexical_semantics)
    )
    if diffs:
        return Readiness(
            ok=False, active=snapshot_id, state=info.state, differences=tuple(diffs),
            reason=f"active snapshot {snapshot_id} does not match the running configuration: "
            + "; ".join(diffs) + ". Re-ingest (`citadel ingest PATH`) to build a snapshot for "
            "this configuration (unchanged chunks come from the ingest cache), or serve it "
            "with the settings and Citadel version it was built with",
        )
    try:
        present = backend.has_snapshot(snapshot_id)
    except RetrievalError as exc:
        # Not ready now; an engine may still open and answer with the bounded fallback
        # until the server is back.
        return Readiness(ok=False, active=snapshot_id, state=info.state,
                         backend_unreachable=True,
                         reason=f"the {settings.backend} backend is unreachable: {exc}")
    if not present:
        return Readiness(ok=False, active=snapshot_id, state=info.state,
                         reason=f"the data of active snapshot {snapshot_id} is missing")
    if info.fingerprint.get("dense_index") and not ann.available():
        return Readiness(ok=False, active=snapshot_id, state=info.state,
                         reason=f"active snapshot {snapshot_id} has an ANN index: "
                                f"{ann.INSTALL_HINT}")
    # Files that are there but truncated or overwritten are refused here, not by the first
    # request that reads them.
    damaged = backend.check_snapshot(snapshot_id, info.chunks)
    if damaged:
        return Readiness(ok=False, active=snapshot_id, state=info.state,
                         reason=f"the data of active snapshot {snapshot_id} is damaged: "
                         f"{damaged}")
    return Readiness(ok=True, active=snapshot_id, state=info.state,
                     reason=f"serving snapshot {snapshot_id}")
