"""An app engine whose settings point at a freshly seeded demo business database, so that
`create_app(engine)` serves `/v1/agent` as `citadel serve` does after `citadel demo-data`."""

from __future__ import annotations

from pathlib import Path

from citadel.agent.db import SqliteBusinessDB
from citadel.agent.demo_data import DEMO_CUSTOMERS, seed_demo_data
from citadel.engine import Engine

ALICE_KEY = DEMO_CUSTOMERS[0].api_key
BOB_KEY = DEMO_CUSTOMERS[1].api_key


def with_demo_business(engine: Engine, path: Path) -> Engine:
    """`engine`'s index and models, configured with demo data (dated today) at `path`."""
    db = SqliteBusinessDB(path)
    try:
        seed_demo_data(db)
    finally:
        db.close()
    settings = engine.settings.model_copy(update={"business_dsn": f"sqlite:///{path}"})
    return Engine(settings, engine.index, engine.embedder, engine.generator,
                  reranker=engine.reranker, request_log=engine.request_log)
