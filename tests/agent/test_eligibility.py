"""Refund eligibility is a pure function of order state, versioned rules and the time."""

from __future__ import annotations

import datetime as dt

from hypothesis import given
from hypothesis import strategies as st

from citadel.agent.eligibility import evaluate, rules_for
from citadel.agent.records import Order, OrderItem, Refund, RefundRules

UTC = dt.UTC
RULES_2023 = RefundRules(version="rr-2023-01-15",
                         effective_from=dt.datetime(2023, 1, 15, tzinfo=UTC), window_days=14,
                         refundable_statuses=("delivered",),
                         non_refundable_categories=("gift_card", "personalised"),
                         auto_approve_limit_minor=50000)
RULES_2026 = RULES_2023.model_copy(update={
    "version": "rr-2026-03-01", "effective_from": dt.datetime(2026, 3, 1, tzinfo=UTC),
    "window_days": 30})
DELIVERED = dt.datetime(2026, 5, 3, 14, tzinfo=UTC)


def order(**update) -> Order:
    base = Order(order_id=1042, status="delivered", placed_at=dt.datetime(2026, 4, 29, tzinfo=UTC),
                 delivered_at=DELIVERED, total_minor=14500, currency="GBP",
                 items=(OrderItem(sku="B", description="boots", category="footwear", quantity=1,
                                  unit_price_minor=12000),
                        OrderItem(sku="G", description="gift card", category="gift_card",
                                  quantity=1, unit_price_minor=2500)))
    return base.model_copy(update=update)


def test_window_is_inclusive_of_its_last_instant():
    end = DELIVERED + dt.timedelta(days=30)
    assert evaluate(order(), RULES_2026, end).eligible
    late = evaluate(order(), RULES_2026, end + dt.timedelta(seconds=1))
    assert not late.eligible and late.reason == "window_expired"
    assert late.window_ends_at == end


def test_rules_in_effect_when_the_order_was_placed_apply():
    old = order(placed_at=dt.datetime(2025, 12, 1, tzinfo=UTC))
    assert rules_for(old, [RULES_2026, RULES_2023]).version == "rr-2023-01-15"
    assert rules_for(order(), [RULES_2023, RULES_2026]).version == "rr-2026-03-01"
    day20 = DELIVERED + dt.timedelta(days=20)
    assert evaluate(old, rules_for(old, [RULES_2023, RULES_2026]), day20).reason == \
        "window_expired"
    assert evaluate(order(), RULES_2026, day20).eligible


def test_state_reasons():
    now = DELIVERED + dt.timedelta(days=1)
    refund = Refund(refund_id=1, order_id=1042, amount_minor=12000, currency="GBP",
                    status="approved", reason="x", rules_version="rr-2026-03-01",
                    created_at=now)
    assert evaluate(order(refund=refund), RULES_2026, now).reason == "already_refunded"
    assert evaluate(order(status="shipped", delivered_at=None), RULES_2026, now).reason == \
        "not_delivered"
    assert evaluate(order(status="cancelled"), RULES_2026, now).reason == "cancelled"
    gift_only = order(items=order().items[1:])
    assert evaluate(gift_only, RULES_2026, now).reason == "no_refundable_items"
    ok = evaluate(order(), RULES_2026, now)
    assert ok.eligible and ok.refundable_minor == 12000 and ok.rules_version == "rr-2026-03-01"


@given(days=st.integers(-5, 400), status=st.sampled_from(["placed", "shipped", "delivered",
                                                          "cancelled"]),
       price=st.integers(0, 10**7), category=st.sampled_from(["footwear", "gift_card"]))
def test_eligible_exactly_when_delivered_in_window_with_something_refundable(days, status,
                                                                             price, category):
    o = order(status=status, delivered_at=DELIVERED if status == "delivered" else None,
              items=(OrderItem(sku="X", description="x", category=category, quantity=1,
                               unit_price_minor=price),))
    e = evaluate(o, RULES_2026, DELIVERED + dt.timedelta(days=days))
    expected = (status == "delivered" and days <= 30 and category != "gift_card" and price > 0)
    assert e.eligible == expected
    assert 0 <= e.refundable_minor <= o.items[0].unit_price_minor
    assert (e.refundable_minor > 0) == e.eligible
