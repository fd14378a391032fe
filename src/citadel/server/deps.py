"""Request dependencies shared by the routers."""

from __future__ import annotations

from fastapi import Request

from citadel.engine import Engine


def get_engine(request: Request) -> Engine:
    """The app's engine; raises NotReady (→ 503) when no knowledge base can be served."""
    engine: Engine = request.app.state.provider.get()
    request.state.log.update(snapshot_id=engine.index.snapshot_id, backend=engine.index.backend)
    return engine
