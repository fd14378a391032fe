"""Customer-scoped tools on SQLite and PostgreSQL: ownership, state, idempotency, audit."""

from __future__ import annotations

import inspect
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from citadel.agent import business
from citadel.agent.auth import authenticate_key
from citadel.agent.records import ToolCall
from citadel.agent.tools import CustomerTools
from tests.agent.conftest import BOB_KEY, fixed_now


def tools_for(db, caller, request_id: str | None = None) -> CustomerTools:
    return CustomerTools(db, caller, request_id=request_id or uuid.uuid4().hex, now=fixed_now)


def audit(db, request_id):
    with db.transaction() as tx:
        return business.audit_entries(tx, request_id=request_id)


def refunds_of(db, order_id):
    with db.transaction() as tx:
        return tx.all("SELECT id, customer_id, idempotency_key FROM refunds WHERE order_id = :o",
                      {"o": order_id})


def test_tools_take_no_customer_argument():
    for name in ("get_order", "list_orders", "check_refund_eligibility", "request_refund"):
        params = inspect.signature(getattr(CustomerTools, name)).parameters
        assert not any("customer" in p for p in params), name


def test_get_order_returns_own_order_with_items(business_db, alice):
    result = tools_for(business_db, alice).get_order(1042)
    assert result.outcome == "ok" and result.authoritative and result.source == "order system"
    order = result.data["order"]
    assert order["order_id"] == 1042 and order["status"] == "delivered"
    assert [i["sku"] for i in order["items"]] == ["FS-BOOT-42", "GC-25"]
    assert result.call == ToolCall(name="get_order", arguments={"order_id": 1042})
    assert "(order system)" in result.summary


def test_other_customers_order_is_not_found_and_the_probe_is_audited(business_db, alice):
    rid = uuid.uuid4().hex
    tools = tools_for(business_db, alice, rid)
    results = [tools.get_order(2001), tools.check_refund_eligibility(2001),
               tools.request_refund(2001, "mine now", "probe-key-0001")]
    missing = tools.get_order(987654)
    for r in results:
        assert r.outcome == "not_found"
        assert r.data == {} and "2001" in r.summary
        assert "Bob" not in r.summary and "240" not in r.summary and "EUR" not in r.summary
    # The customer cannot tell "someone else's" from "does not exist"...
    assert missing.summary == results[0].summary.replace("2001", "987654")
    # ...but the audit log can.
    entries = audit(business_db, rid)
    assert [e.tool for e in entries] == ["get_order", "check_refund_eligibility",
                                        "request_refund", "get_order"]
    assert all(e.customer_id == "cust_alice" for e in entries)
    assert [e.detail for e in entries] == ["order belongs to another customer"] * 3 + [
        "no such order"]
    assert refunds_of(business_db, 2001) == []


def test_list_orders_lists_only_the_callers_orders(business_db, alice):
    result = tools_for(business_db, alice).list_orders()
    ids = {o["order_id"] for o in result.data["orders"]}
    assert ids == {1038, 1042, 1045, 1047, 1051}


@pytest.mark.parametrize(("order_id", "eligible", "reason", "amount"), [
    (1042, True, "eligible", 12000),           # gift card excluded from the amount
    (1038, False, "window_expired", 0),
    (1045, False, "not_delivered", 0),
    (1047, False, "no_refundable_items", 0),
])
def test_eligibility_comes_from_database_state_and_versioned_rules(
        business_db, alice, order_id, eligible, reason, amount):
    result = tools_for(business_db, alice).check_refund_eligibility(order_id)
    e = result.data["eligibility"]
    assert (e["eligible"], e["reason"], e["refundable_minor"]) == (eligible, reason, amount)
    assert e["rules_version"] == "rr-2026-03-01"


def test_already_refunded_order_is_not_eligible(business_db):
    bob = authenticate_key(business_db, BOB_KEY)
    e = tools_for(business_db, bob).check_refund_eligibility(2002).data["eligibility"]
    assert e["reason"] == "already_refunded" and not e["eligible"]


def test_refund_is_created_once_and_replayed_for_the_same_key(business_db, alice):
    tools = tools_for(business_db, alice)
    first = tools.request_refund(1042, "too small", "key-1042-aaaa")
    again = tools.request_refund(1042, "too small", "key-1042-aaaa")
    other_key = tools.request_refund(1042, "too small", "key-1042-bbbb")
    reused = tools.request_refund(1038, "too small", "key-1042-aaaa")
    assert first.outcome == "refund_created"
    refund = first.data["refund"]
    assert (refund["amount_minor"], refund["currency"], refund["status"]) == (12000, "GBP",
                                                                             "approved")
    assert refund["rules_version"] == "rr-2026-03-01"
    assert again.outcome == "refund_replayed"
    assert again.data["refund"]["refund_id"] == refund["refund_id"]
    assert other_key.outcome == "not_eligible"
    assert other_key.data["eligibility"]["reason"] == "already_refunded"
    assert reused.outcome == "idempotency_conflict"
    assert len(refunds_of(business_db, 1042)) == 1 and refunds_of(business_db, 1038) == []


def test_refund_over_the_auto_approval_limit_goes_to_review(business_db, alice):
    result = tools_for(business_db, alice).request_refund(1051, "", "key-1051-aaaa")
    assert result.outcome == "refund_created"
    assert result.data["refund"]["status"] == "pending_review"
    assert "review" in result.summary


def test_ineligible_refund_is_refused(business_db, alice):
    result = tools_for(business_db, alice).request_refund(1038, "late", "key-1038-aaaa")
    assert result.outcome == "not_eligible" and refunds_of(business_db, 1038) == []


@pytest.mark.parametrize("same_key", [True, False], ids=["same-key", "distinct-keys"])
def test_twenty_parallel_refund_requests_make_one_refund(business_db, alice, same_key):
    rid = uuid.uuid4().hex
    start = threading.Barrier(20)

    def attempt(i: int):
        tools = tools_for(business_db, alice, rid)
        start.wait()
        key = "retry-key-1042" if same_key else f"retry-key-1042-{i:02d}"
        return tools.request_refund(1042, "does not fit", key)

    with ThreadPoolExecutor(20) as pool:
        results = list(pool.map(attempt, range(20)))
    outcomes = [r.outcome for r in results]
    assert outcomes.count("refund_created") == 1
    if same_key:
        assert outcomes.count("refund_replayed") == 19
        assert len({r.data["refund"]["refund_id"] for r in results}) == 1
    else:
        assert outcomes.count("not_eligible") == 19
    assert len(refunds_of(business_db, 1042)) == 1
    entries = audit(business_db, rid)
    assert len(entries) == 20 and all(e.tool == "request_refund" for e in entries)


@pytest.mark.parametrize("arguments", [
    {"order_id": "1042"}, {"order_id": -1}, {"order_id": 0}, {"order_id": 10**12},
    {"order_id": 1.5}, {"order_id": True}, {"order_id": "1042 OR 1=1"}, {},
    {"order_id": 1042, "customer_id": "cust_bob"},
])
def test_malformed_arguments_are_refused_and_audited(business_db, alice, arguments):
    rid = uuid.uuid4().hex
    result = tools_for(business_db, alice, rid).call(
        ToolCall(name="get_order", arguments=arguments))
    assert result.outcome == "invalid_argument" and result.data == {}
    [entry] = audit(business_db, rid)
    assert entry.outcome == "invalid_argument" and entry.arguments == arguments


def test_refund_with_malformed_idempotency_key_is_refused(business_db, alice):
    for key in ["short", "x" * 200, "key with spaces!", "k'); DROP TABLE refunds;--"]:
        result = tools_for(business_db, alice).request_refund(1042, "r", key)
        assert result.outcome == "invalid_argument"
    assert refunds_of(business_db, 1042) == []


def test_sql_shaped_input_is_stored_verbatim_and_inert(business_db, alice):
    reason = "'); DROP TABLE refunds; -- \" OR 1=1; DELETE FROM orders"
    result = tools_for(business_db, alice).request_refund(1042, reason, "key-sql-0001")
    assert result.outcome == "refund_created"
    assert result.data["refund"]["reason"] == reason
    with business_db.transaction() as tx:
        assert tx.one("SELECT count(*) AS n FROM orders")["n"] == 7
        assert tx.one("SELECT reason FROM refunds WHERE order_id = 1042")["reason"] == reason


def test_every_tool_call_is_audited_with_caller_arguments_and_outcome(business_db, alice):
    rid = uuid.uuid4().hex
    tools = tools_for(business_db, alice, rid)
    tools.list_orders()
    tools.get_order(1042)
    tools.check_refund_eligibility(1038)
    tools.request_refund(1042, "too big", "key-audit-0001")
    entries = audit(business_db, rid)
    assert [(e.tool, e.outcome) for e in entries] == [
        ("list_orders", "ok"), ("get_order", "ok"), ("check_refund_eligibility", "ok"),
        ("request_refund", "refund_created")]
    assert {(e.customer_id, e.actor) for e in entries} == {
        ("cust_alice", "api_key:key_demo_cust_alice")}
    assert entries[3].arguments == {"order_id": 1042, "reason": "too big",
                                    "idempotency_key": "key-audit-0001"}
    assert entries[2].detail == "window_expired"
    assert all(e.at == fixed_now() for e in entries)


def test_parallel_refunds_through_separate_handles_on_one_sqlite_file(sqlite_business):
    # Separate handles do not share the in-process write lock, as separate processes would
    # not: here SQLite's own file lock (BEGIN IMMEDIATE) is what serializes them.
    from citadel.agent.auth import authenticate_key as auth
    from citadel.agent.db import SqliteBusinessDB
    from tests.agent.conftest import ALICE_KEY

    handles = [SqliteBusinessDB(sqlite_business.path) for _ in range(20)]
    caller = auth(sqlite_business, ALICE_KEY)
    start = threading.Barrier(20)

    def attempt(db):
        tools = tools_for(db, caller)
        start.wait()
        return tools.request_refund(1042, "does not fit", "multi-handle-key").outcome

    with ThreadPoolExecutor(20) as pool:
        outcomes = list(pool.map(attempt, handles))
    for db in handles:
        db.close()
    assert sorted(outcomes) == ["refund_created"] + ["refund_replayed"] * 19
    assert len(refunds_of(sqlite_business, 1042)) == 1
