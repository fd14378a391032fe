"""Deterministic demo customers, API keys and orders (`citadel demo-data`).

Dates are relative to `today` (default: today, UTC), so the demo always has one order inside
its refund window, one past it, one not yet delivered, and so on; with the same `today` the
data are identical. Re-seeding replaces the demo customers' rows and keeps the audit log.
The demo API keys are published in docs/agent.md: never use them outside a demo.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from citadel.agent.auth import hash_api_key
from citadel.agent.db import BusinessDB, Tx
from citadel.agent.migrations import migrate

UTC = dt.UTC


@dataclass(frozen=True)
class DemoItem:
    sku: str
    description: str
    category: str
    quantity: int
    unit_price_minor: int


@dataclass(frozen=True)
class DemoOrder:
    order_id: int
    status: str
    placed_days_ago: int
    delivered_days_ago: int | None
    currency: str
    items: tuple[DemoItem, ...]
    refunded_days_ago: int | None = None
    note: str = ""


@dataclass(frozen=True)
class DemoCustomer:
    customer_id: str
    name: str
    email: str
    api_key: str
    orders: tuple[DemoOrder, ...]


DEMO_CUSTOMERS: tuple[DemoCustomer, ...] = (
    DemoCustomer("cust_alice", "Alice Rowan", "alice@example.com",
                 "cit_demo_alice_n4Vq8sT2wZ6yR1kP", (
        DemoOrder(1042, "delivered", 9, 5, "GBP", (
            DemoItem("FS-BOOT-42", "Fellside walking boots", "footwear", 1, 12000),
            DemoItem("GC-25", "Gift card", "gift_card", 1, 2500)),
            note="inside the 30-day window; the gift card is not refundable"),
        DemoOrder(1038, "delivered", 50, 45, "GBP", (
            DemoItem("MB-LAYER-M", "Merino base layer", "clothing", 1, 4500),),
            note="refund window expired"),
        DemoOrder(1045, "shipped", 2, None, "GBP", (
            DemoItem("TR-JKT-L", "Tarn rain jacket", "clothing", 1, 18000),),
            note="not delivered yet"),
        DemoOrder(1047, "delivered", 20, 16, "GBP", (
            DemoItem("BTL-NAME", "Personalised water bottle", "personalised", 1, 1800),),
            note="only personalised items"),
        DemoOrder(1051, "delivered", 7, 3, "GBP", (
            DemoItem("TENT-EXP4", "Expedition tent (4 person)", "equipment", 1, 65000),),
            note="over the auto-approval limit: a refund goes to review"),
    )),
    DemoCustomer("cust_bob", "Bob Kettering", "bob@example.com",
                 "cit_demo_bob_Hx3Jm7Lq2Vb9Tc5W", (
        DemoOrder(2001, "delivered", 8, 4, "EUR", (
            DemoItem("DN-JKT-M", "Down jacket", "clothing", 1, 24000),),
            note="eligible (another customer's order, for the security demo)"),
        DemoOrder(2002, "delivered", 15, 12, "GBP", (
            DemoItem("SCK-3PK", "Hiking socks (3 pack)", "clothing", 2, 3000),),
            refunded_days_ago=6, note="already refunded"),
    )),
)


def _at(today: dt.date, days_ago: int, hour: int) -> dt.datetime:
    return dt.datetime.combine(today - dt.timedelta(days=days_ago), dt.time(hour), tzinfo=UTC)


def _delete_customer(tx: Tx, customer_id: str) -> None:
    p = {"c": customer_id}
    tx.execute("DELETE FROM refunds WHERE customer_id = :c", p)
    tx.execute("DELETE FROM refunds WHERE order_id IN "
               "(SELECT id FROM orders WHERE customer_id = :c)", p)
    tx.execute("DELETE FROM order_items WHERE order_id IN "
               "(SELECT id FROM orders WHERE customer_id = :c)", p)
    tx.execute("DELETE FROM orders WHERE customer_id = :c", p)
    tx.execute("DELETE FROM api_keys WHERE customer_id = :c", p)
    tx.execute("DELETE FROM customers WHERE id = :c", p)


def _insert_customer(tx: Tx, c: DemoCustomer, today: dt.date) -> None:
    created = _at(today, 400, 9)
    tx.execute("INSERT INTO customers (id, name, email, created_at) VALUES (:id, :n, :e, :at)",
               {"id": c.customer_id, "n": c.name, "e": c.email, "at": created})
    tx.execute("INSERT INTO api_keys (id, customer_id, key_sha256, label, created_at) "
               "VALUES (:id, :c, :h, 'demo', :at)",
               {"id": f"key_demo_{c.customer_id}", "c": c.customer_id,
                "h": hash_api_key(c.api_key), "at": created})
    for o in c.orders:
        total = sum(i.quantity * i.unit_price_minor for i in o.items)
        delivered = _at(today, o.delivered_days_ago, 14) if o.delivered_days_ago is not None \
            else None
        tx.execute(
            "INSERT INTO orders (id, customer_id, status, placed_at, delivered_at, total_minor, "
            "currency) VALUES (:id, :c, :s, :p, :d, :t, :cur)",
            {"id": o.order_id, "c": c.customer_id, "s": o.status,
             "p": _at(today, o.placed_days_ago, 10), "d": delivered, "t": total,
             "cur": o.currency})
        for i in o.items:
            tx.execute(
                "INSERT INTO order_items (order_id, sku, description, category, quantity, "
                "unit_price_minor) VALUES (:o, :sku, :d, :cat, :q, :u)",
                {"o": o.order_id, "sku": i.sku, "d": i.description, "cat": i.category,
                 "q": i.quantity, "u": i.unit_price_minor})
        if o.refunded_days_ago is not None:
            tx.execute(
                "INSERT INTO refunds (order_id, customer_id, idempotency_key, amount_minor, "
                "currency, reason, status, rules_version, created_at) "
                "VALUES (:o, :c, :k, :a, :cur, 'changed my mind', 'approved', 'rr-2026-03-01', "
                ":at)",
                {"o": o.order_id, "c": c.customer_id, "k": f"demo-{o.order_id}", "a": total,
                 "cur": o.currency, "at": _at(today, o.refunded_days_ago, 11)})


def seed_demo_data(db: BusinessDB, today: dt.date | None = None) -> tuple[DemoCustomer, ...]:
    """Migrate, then (re)create the demo customers; returns them (with their demo keys)."""
    today = today or dt.datetime.now(UTC).date()
    migrate(db)
    with db.transaction(write=True) as tx:
        for c in DEMO_CUSTOMERS:
            _delete_customer(tx, c.customer_id)
        for c in DEMO_CUSTOMERS:
            _insert_customer(tx, c, today)
    return DEMO_CUSTOMERS
