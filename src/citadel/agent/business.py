"""The business repository: every query the agent runs against the order system.

Each function takes an open `Tx`. Queries that read customer data take the customer id as a
bound parameter and filter on it in SQL, so a row of another customer never leaves the
database. Parameters are always bound, never formatted into SQL text.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from pydantic import BaseModel, ConfigDict

from citadel.agent.db import Row, Tx
from citadel.agent.records import Order, OrderItem, Refund, RefundRules

UTC = dt.UTC

_ORDER_COLUMNS = "id, customer_id, status, placed_at, delivered_at, total_minor, currency"
_REFUND_COLUMNS = ("id, order_id, amount_minor, currency, status, reason, rules_version, "
                   "created_at")


class AuditEntry(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: int
    at: dt.datetime
    request_id: str
    customer_id: str
    actor: str
    tool: str
    arguments: dict[str, Any]
    outcome: str
    detail: str


def _refund(row: Row) -> Refund:
    return Refund(refund_id=row["id"], order_id=row["order_id"],
                  amount_minor=row["amount_minor"], currency=row["currency"],
                  status=row["status"], reason=row["reason"],
                  rules_version=row["rules_version"], created_at=row["created_at"])


def _order(tx: Tx, row: Row) -> Order:
    items = tx.all(
        "SELECT sku, description, category, quantity, unit_price_minor FROM order_items "
        "WHERE order_id = :o ORDER BY id", {"o": row["id"]})
    refund = tx.one(f"SELECT {_REFUND_COLUMNS} FROM refunds WHERE order_id = :o",
                    {"o": row["id"]})
    return Order(
        order_id=row["id"], status=row["status"], placed_at=row["placed_at"],
        delivered_at=row["delivered_at"], total_minor=row["total_minor"],
        currency=row["currency"], items=tuple(OrderItem(**i) for i in items),
        refund=_refund(refund) if refund else None,
    )


def get_order(tx: Tx, customer_id: str, order_id: int, *, lock: bool = False) -> Order | None:
    """The customer's order, or None: another customer's order is indistinguishable from a
    missing one. `lock=True` locks the row until the transaction ends (PostgreSQL)."""
    row = tx.one(
        f"SELECT {_ORDER_COLUMNS} FROM orders WHERE id = :o AND customer_id = :c"
        + (tx.for_update if lock else ""),
        {"o": order_id, "c": customer_id},
    )
    return _order(tx, row) if row else None


def order_exists_for_other_customer(tx: Tx, customer_id: str, order_id: int) -> bool:
    """For the audit log only (flags probing of other customers' orders); never shown."""
    row = tx.one("SELECT 1 AS hit FROM orders WHERE id = :o AND customer_id <> :c",
                 {"o": order_id, "c": customer_id})
    return row is not None


def list_orders(tx: Tx, customer_id: str, *, limit: int = 20) -> list[Order]:
    rows = tx.all(
        f"SELECT {_ORDER_COLUMNS} FROM orders WHERE customer_id = :c "
        "ORDER BY placed_at DESC, id DESC LIMIT :n",
        {"c": customer_id, "n": limit},
    )
    return [_order(tx, r) for r in rows]


def refund_rules(tx: Tx) -> list[RefundRules]:
    rows = tx.all(
        "SELECT version, effective_from, window_days, refundable_statuses, "
        "non_refundable_categories, auto_approve_limit_minor FROM refund_rules "
        "ORDER BY effective_from")
    return [RefundRules(
        version=r["version"], effective_from=r["effective_from"], window_days=r["window_days"],
        refundable_statuses=tuple(json.loads(r["refundable_statuses"])),
        non_refundable_categories=tuple(json.loads(r["non_refundable_categories"])),
        auto_approve_limit_minor=r["auto_approve_limit_minor"],
    ) for r in rows]


def refund_by_key(tx: Tx, customer_id: str, idempotency_key: str) -> Refund | None:
    row = tx.one(
        f"SELECT {_REFUND_COLUMNS} FROM refunds "
        "WHERE customer_id = :c AND idempotency_key = :k",
        {"c": customer_id, "k": idempotency_key},
    )
    return _refund(row) if row else None


def insert_refund(
    tx: Tx, *, customer_id: str, order_id: int, idempotency_key: str, amount_minor: int,
    currency: str, reason: str, status: str, rules_version: str, now: dt.datetime,
) -> Refund | None:
    """Insert a refund; None when a unique constraint (one refund per order, one per
    customer + idempotency key) says another request got there first."""
    row = tx.one(
        "INSERT INTO refunds (order_id, customer_id, idempotency_key, amount_minor, currency, "
        "reason, status, rules_version, created_at) "
        "VALUES (:o, :c, :k, :a, :cur, :r, :s, :v, :at) "
        f"ON CONFLICT DO NOTHING RETURNING {_REFUND_COLUMNS}",
        {"o": order_id, "c": customer_id, "k": idempotency_key, "a": amount_minor,
         "cur": currency, "r": reason, "s": status, "v": rules_version, "at": now},
    )
    return _refund(row) if row else None


def append_audit(
    tx: Tx, *, at: dt.datetime, request_id: str, customer_id: str, actor: str, tool: str,
    arguments: dict[str, Any], outcome: str, detail: str = "",
) -> None:
    tx.execute(
        "INSERT INTO audit_log (at, request_id, customer_id, actor, tool, arguments, outcome, "
        "detail) VALUES (:at, :rid, :c, :actor, :tool, :args, :outcome, :detail)",
        {"at": at, "rid": request_id, "c": customer_id, "actor": actor, "tool": tool,
         "args": json.dumps(arguments, sort_keys=True, default=str), "outcome": outcome,
         "detail": detail},
    )


def audit_entries(tx: Tx, *, customer_id: str | None = None,
                  request_id: str | None = None) -> list[AuditEntry]:
    clauses, params = [], {}
    if customer_id is not None:
        clauses.append("customer_id = :c")
        params["c"] = customer_id
    if request_id is not None:
        clauses.append("request_id = :rid")
        params["rid"] = request_id
    where = (" WHERE " + " AND ".join(clauses)) if clauses else ""
    rows = tx.all("SELECT id, at, request_id, customer_id, actor, tool, arguments, outcome, "
                  f"detail FROM audit_log{where} ORDER BY id", params)
    return [AuditEntry(**{**r, "arguments": json.loads(r["arguments"])}) for r in rows]


def customer_by_id(tx: Tx, customer_id: str) -> Row | None:
    return tx.one("SELECT id, name, email, tenant FROM customers WHERE id = :c",
                  {"c": customer_id})


def customer_by_key_hash(tx: Tx, key_sha256: str) -> Row | None:
    return tx.one(
        "SELECT c.id AS customer_id, c.name AS name, c.tenant AS tenant, k.id AS key_id "
        "FROM api_keys k "
        "JOIN customers c ON c.id = k.customer_id "
        "WHERE k.key_sha256 = :h AND k.revoked_at IS NULL",
        {"h": key_sha256},
    )
