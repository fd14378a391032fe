"""The business database layer: migrations, placeholders, dialect choice, outages."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from citadel.agent.db import (
    BusinessUnavailable,
    PostgresBusinessDB,
    SqliteBusinessDB,
    open_business_db,
    to_pyformat,
)
from citadel.agent.migrations import MIGRATIONS, applied_versions, latest_version, migrate


def test_migrations_apply_once_in_order_and_are_recorded(tmp_path):
    db = SqliteBusinessDB(tmp_path / "b.sqlite")
    assert migrate(db) == [m.version for m in MIGRATIONS]
    assert migrate(db) == []
    assert applied_versions(db) == list(range(1, latest_version() + 1))
    with db.transaction() as tx:
        names = {r["name"] for r in tx.all("SELECT name FROM sqlite_master WHERE type='table'")}
        rules = tx.all("SELECT version, window_days FROM refund_rules ORDER BY version")
    assert {"customers", "api_keys", "orders", "order_items", "refunds", "audit_log",
            "refund_rules", "schema_migrations"} <= names
    assert rules == [{"version": "rr-2023-01-15", "window_days": 14},
                     {"version": "rr-2026-03-01", "window_days": 30}]


def test_migrating_an_up_to_date_database_does_nothing(business_db):
    assert migrate(business_db) == []
    assert applied_versions(business_db) == [m.version for m in MIGRATIONS]


def test_racing_migrators_on_a_fresh_database_apply_each_version_once(tmp_path):
    db = SqliteBusinessDB(tmp_path / "fresh.sqlite")
    start = threading.Barrier(4)

    def run(_):
        start.wait()
        return migrate(db)

    with ThreadPoolExecutor(4) as pool:
        applied = [v for result in pool.map(run, range(4)) for v in result]
    assert sorted(applied) == [m.version for m in MIGRATIONS]


def test_postgres_schema_uses_native_types(pg_business):
    migrate(pg_business)
    with pg_business.transaction() as tx:
        types = {r["column_name"]: r["data_type"] for r in tx.all(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_name = 'orders'")}
    assert types["delivered_at"] == "timestamp with time zone"
    assert types["total_minor"] == "bigint"


def test_named_placeholders_become_pyformat_and_casts_survive():
    assert to_pyformat("SELECT :a::text, x FROM t WHERE y = :b_1") == \
        "SELECT %(a)s::text, x FROM t WHERE y = %(b_1)s"
    with pytest.raises(ValueError):
        to_pyformat("SELECT 'a%' FROM t")


def test_dsn_selects_the_database(tmp_path):
    assert open_business_db(None, tmp_path).path == tmp_path / "business.sqlite"
    assert open_business_db(f"sqlite:///{tmp_path}/x.db", tmp_path).path == tmp_path / "x.db"
    assert open_business_db(str(tmp_path / "y.db"), tmp_path).path == tmp_path / "y.db"
    conninfo = open_business_db("host=127.0.0.1 port=1 dbname=x connect_timeout=1", tmp_path)
    assert conninfo.dialect == "postgres"
    conninfo.close()
    with pytest.raises(ValueError, match="unsupported"):
        open_business_db("mysql://u:secret@h/db", tmp_path)


def test_corrupt_sqlite_file_is_an_outage_not_a_crash(tmp_path):
    path = tmp_path / "b.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(BusinessUnavailable), SqliteBusinessDB(path).transaction() as tx:
        tx.all("SELECT 1")


def test_unreachable_postgres_is_an_outage_not_a_crash():
    db = PostgresBusinessDB("postgresql://postgres:pw@127.0.0.1:1/none", timeout_s=1)
    try:
        assert "pw" not in db.description
        with pytest.raises(BusinessUnavailable), db.transaction() as tx:
            tx.all("SELECT 1")
    finally:
        db.close()


def test_descriptions_never_show_passwords():
    from citadel.agent.db import _redact

    for dsn in ["postgresql://u:s3cret@h/db", "host=h password=s3cret dbname=x",
                "password='s3 cret' host=h"]:
        assert "s3" not in _redact(dsn)
