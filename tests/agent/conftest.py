"""Fixtures for the support agent: demo business data on SQLite and on PostgreSQL, a fixed
clock, and agents over the hashing-embedder demo knowledge base."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterator

import pytest

from citadel.agent.agent import SupportAgent
from citadel.agent.auth import authenticate_key
from citadel.agent.db import BusinessDB, PostgresBusinessDB, SqliteBusinessDB
from citadel.agent.decider import RuleDecider
from citadel.agent.demo_data import DEMO_CUSTOMERS, seed_demo_data
from citadel.agent.records import Caller

TODAY = dt.date(2026, 6, 15)
NOW = dt.datetime(2026, 6, 15, 12, 0, tzinfo=dt.UTC)
ALICE_KEY = DEMO_CUSTOMERS[0].api_key
BOB_KEY = DEMO_CUSTOMERS[1].api_key


def fixed_now() -> dt.datetime:
    return NOW


@pytest.fixture(scope="session")
def agent_pg_dsn(postgres_dsn: str) -> Iterator[str]:
    """A database of our own on the shared test server, dropped at the end of the session
    (other helpers use the same server: never touch their databases)."""
    import psycopg
    from psycopg import sql
    from psycopg.conninfo import make_conninfo

    name = f"citadel_agent_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    yield make_conninfo(postgres_dsn, dbname=name)
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)")
                     .format(sql.Identifier(name)))


@pytest.fixture(scope="session")
def pg_business(agent_pg_dsn: str) -> Iterator[PostgresBusinessDB]:
    db = PostgresBusinessDB(agent_pg_dsn, max_size=8)
    yield db
    db.close()


@pytest.fixture(params=["sqlite", "postgres"])
def business_db(request, tmp_path) -> BusinessDB:
    """Freshly seeded demo data, on each database the agent supports."""
    if request.param == "sqlite":
        db: BusinessDB = SqliteBusinessDB(tmp_path / "business.sqlite")
    else:
        db = request.getfixturevalue("pg_business")
    seed_demo_data(db, TODAY)
    return db


@pytest.fixture
def sqlite_business(tmp_path) -> BusinessDB:
    db = SqliteBusinessDB(tmp_path / "business.sqlite")
    seed_demo_data(db, TODAY)
    return db


@pytest.fixture
def alice(business_db) -> Caller:
    return authenticate_key(business_db, ALICE_KEY)


def make_agent(db: BusinessDB, engine, decider=None) -> SupportAgent:
    return SupportAgent(db, engine, decider or RuleDecider(), now=fixed_now)
