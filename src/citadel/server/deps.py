"""Request dependencies shared by the routers."""

from __future__ import annotations

from fastapi import Request
from fastapi.concurrency import run_in_threadpool

from citadel.engine import Engine


async def get_engine(request: Request) -> Engine:
    """The app's engine; raises NotReady (→ 503) when no knowledge base can be served.

    Usually the served engine is returned at once, on the event loop; when an alias check or
    an engine switch is due (SQLite, maybe opening a snapshot) that runs in a worker thread,
    so the loop never blocks on it."""
    provider = request.app.state.provider
    engine = provider.current()
    if engine is None:
        engine = await run_in_threadpool(provider.get)
    request.state.log.update(snapshot_id=engine.index.snapshot_id, backend=engine.index.backend)
    return engine
