"""Versioned migrations of the business schema, recorded in `schema_migrations`.

Each migration is applied once, in order, in its own transaction, with DDL per dialect.
Money is stored in minor units (integer pence/cents); timestamps are UTC (`timestamptz` in
PostgreSQL, ISO-8601 text in SQLite). Refund eligibility rules are data in `refund_rules`,
versioned by id and effective date, never parsed out of documents.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from citadel.agent.db import BusinessDB, Tx

UTC = dt.UTC


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sqlite: tuple[str, ...]
    postgres: tuple[str, ...]


_SCHEMA_COMMON = (
    """CREATE TABLE customers (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        email TEXT NOT NULL,
        created_at {ts} NOT NULL
    )""",
    """CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        customer_id TEXT NOT NULL REFERENCES customers(id),
        key_sha256 TEXT NOT NULL UNIQUE,
        label TEXT NOT NULL DEFAULT '',
        created_at {ts} NOT NULL,
        revoked_at {ts}
    )""",
    """CREATE TABLE orders (
        id BIGINT PRIMARY KEY CHECK (id > 0),
        customer_id TEXT NOT NULL REFERENCES customers(id),
        status TEXT NOT NULL
            CHECK (status IN ('placed', 'shipped', 'delivered', 'cancelled')),
        placed_at {ts} NOT NULL,
        delivered_at {ts},
        total_minor BIGINT NOT NULL CHECK (total_minor >= 0),
        currency TEXT NOT NULL CHECK (length(currency) = 3)
    )""",
    "CREATE INDEX orders_customer ON orders (customer_id, placed_at)",
    """CREATE TABLE order_items (
        id {serial},
        order_id BIGINT NOT NULL REFERENCES orders(id),
        sku TEXT NOT NULL,
        description TEXT NOT NULL,
        category TEXT NOT NULL DEFAULT 'general',
        quantity INTEGER NOT NULL CHECK (quantity > 0),
        unit_price_minor BIGINT NOT NULL CHECK (unit_price_minor >= 0)
    )""",
    "CREATE INDEX order_items_order ON order_items (order_id)",
    """CREATE TABLE refunds (
        id {serial},
        order_id BIGINT NOT NULL UNIQUE REFERENCES orders(id),
        customer_id TEXT NOT NULL REFERENCES customers(id),
        idempotency_key TEXT NOT NULL,
        amount_minor BIGINT NOT NULL CHECK (amount_minor > 0),
        currency TEXT NOT NULL,
        reason TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('approved', 'pending_review')),
        rules_version TEXT NOT NULL,
        created_at {ts} NOT NULL,
        UNIQUE (customer_id, idempotency_key)
    )""",
    """CREATE TABLE audit_log (
        id {serial},
        at {ts} NOT NULL,
        request_id TEXT NOT NULL,
        customer_id TEXT NOT NULL,
        actor TEXT NOT NULL,
        tool TEXT NOT NULL,
        arguments TEXT NOT NULL,
        outcome TEXT NOT NULL,
        detail TEXT NOT NULL DEFAULT ''
    )""",
    "CREATE INDEX audit_log_customer ON audit_log (customer_id, at)",
)

_RULES_COMMON = (
    """CREATE TABLE refund_rules (
        version TEXT PRIMARY KEY,
        effective_from {ts} NOT NULL,
        window_days INTEGER NOT NULL CHECK (window_days >= 0),
        refundable_statuses TEXT NOT NULL,
        non_refundable_categories TEXT NOT NULL,
        auto_approve_limit_minor BIGINT NOT NULL,
        note TEXT NOT NULL DEFAULT ''
    )""",
    # The rules the business runs on. They match what the policy documents say, but they are
    # configuration owned by the business: a document can never change them.
    """INSERT INTO refund_rules VALUES
        ('rr-2023-01-15', '2023-01-15T00:00:00+00:00', 14, '["delivered"]',
         '["gift_card", "personalised"]', 50000, 'Refunds and Returns Policy (2023)'),
        ('rr-2026-03-01', '2026-03-01T00:00:00+00:00', 30, '["delivered"]',
         '["gift_card", "personalised"]', 50000, 'Refunds and Returns Policy (March 2026)')""",
)


def _dialect(statements: tuple[str, ...], ts: str, serial: str) -> tuple[str, ...]:
    return tuple(s.format(ts=ts, serial=serial) for s in statements)


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1, "customers, api keys, orders, items, refunds, audit log",
        sqlite=_dialect(_SCHEMA_COMMON, "TEXT", "INTEGER PRIMARY KEY AUTOINCREMENT"),
        postgres=_dialect(_SCHEMA_COMMON, "TIMESTAMPTZ", "BIGINT GENERATED ALWAYS AS IDENTITY "
                          "PRIMARY KEY"),
    ),
    Migration(
        2, "versioned refund eligibility rules",
        sqlite=_dialect(_RULES_COMMON, "TEXT", ""),
        postgres=_dialect(_RULES_COMMON, "TIMESTAMPTZ", ""),
    ),
    # The knowledge-base tenant a customer belongs to: the agent answers their knowledge
    # questions from that tenant's documents and public ones, as /v1/answer does for that
    # tenant's key. NULL: public documents only.
    Migration(
        3, "customers' knowledge-base tenant",
        sqlite=("ALTER TABLE customers ADD COLUMN tenant TEXT",),
        postgres=("ALTER TABLE customers ADD COLUMN tenant TEXT",),
    ),
)

_CREATE_MIGRATIONS_TABLE = """CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TEXT NOT NULL
)"""


def _lock(tx: Tx) -> None:
    # Two processes migrating at once must not both apply a migration.
    if tx.dialect == "postgres":
        tx.execute("SELECT pg_advisory_xact_lock(4242010)")


def applied_versions(db: BusinessDB) -> list[int]:
    with db.transaction() as tx:
        tx.execute(_CREATE_MIGRATIONS_TABLE)
        return [r["version"] for r in tx.all("SELECT version FROM schema_migrations "
                                             "ORDER BY version")]


def migrate(db: BusinessDB, migrations: tuple[Migration, ...] = MIGRATIONS) -> list[int]:
    """Apply pending migrations; returns the versions applied now (empty when up to date)."""
    applied_now: list[int] = []
    with db.transaction(write=True) as tx:
        _lock(tx)
        tx.execute(_CREATE_MIGRATIONS_TABLE)
    for migration in migrations:
        with db.transaction(write=True) as tx:
            _lock(tx)
            done = tx.one("SELECT version FROM schema_migrations WHERE version = :v",
                          {"v": migration.version})
            if done is not None:
                continue
            statements = migration.postgres if tx.dialect == "postgres" else migration.sqlite
            for statement in statements:
                tx.execute(statement)
            tx.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (:v, :n, :at)",
                {"v": migration.version, "n": migration.name,
                 "at": dt.datetime.now(UTC).isoformat()},
            )
            applied_now.append(migration.version)
    return applied_now


def latest_version(migrations: tuple[Migration, ...] = MIGRATIONS) -> int:
    return max(m.version for m in migrations)
