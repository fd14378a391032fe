"""Refund eligibility: a pure function of the order's database state, the rules and the time.

The rules are a versioned `RefundRules` row from the business database; nothing here reads a
document. Every result records the rules version it was decided under.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from citadel.agent.records import Eligibility, Order, RefundRules


def rules_for(order: Order, rules: Sequence[RefundRules]) -> RefundRules:
    """The rules in effect when the order was placed (the earliest set for older orders)."""
    if not rules:
        raise ValueError("no refund rules configured")
    ordered = sorted(rules, key=lambda r: r.effective_from)
    chosen = ordered[0]
    for r in ordered:
        if r.effective_from <= order.placed_at:
            chosen = r
    return chosen


def refundable_amount(order: Order, rules: RefundRules) -> int:
    return sum(i.quantity * i.unit_price_minor for i in order.items
               if i.category not in rules.non_refundable_categories)


def evaluate(order: Order, rules: RefundRules, now: dt.datetime) -> Eligibility:
    window_ends = (order.delivered_at + dt.timedelta(days=rules.window_days)
                   if order.delivered_at is not None else None)
    amount = refundable_amount(order, rules)
    if order.refund is not None:
        reason = "already_refunded"
    elif order.status == "cancelled":
        reason = "cancelled"
    elif order.status not in rules.refundable_statuses or order.delivered_at is None:
        reason = "not_delivered"
    elif window_ends is not None and now > window_ends:
        reason = "window_expired"
    elif amount <= 0:
        reason = "no_refundable_items"
    else:
        reason = "eligible"
    return Eligibility(
        order_id=order.order_id, eligible=reason == "eligible", reason=reason,
        refundable_minor=amount if reason == "eligible" else 0, currency=order.currency,
        delivered_at=order.delivered_at, window_ends_at=window_ends,
        rules_version=rules.version, checked_at=now,
    )
