"""Business facts in words: sentences built only from database values, tagged with their
source so a reader can tell them from cited policy text."""

from __future__ import annotations

import datetime as dt

from citadel.agent.records import Eligibility, Order, Refund

SOURCE_TAG = "(order system)"
UNAVAILABLE = ("I can't check your order right now because the order system is unavailable. "
               "Please try again in a few minutes.")
NOT_FOUND = "I couldn't find order #{order_id} on your account {tag}."

_SYMBOLS = {"GBP": "£", "EUR": "€", "USD": "$"}
_STATUS = {"placed": "has been placed and is being prepared", "shipped": "is on its way",
           "delivered": "was delivered", "cancelled": "was cancelled"}


def money(minor: int, currency: str) -> str:
    amount = f"{minor // 100:,}.{minor % 100:02d}"
    symbol = _SYMBOLS.get(currency.upper())
    return f"{symbol}{amount}" if symbol else f"{amount} {currency.upper()}"


def day(when: dt.datetime | dt.date) -> str:
    return f"{when.day} {when:%B %Y}"


def order_status(order: Order) -> str:
    text = f"Your order #{order.order_id} {_STATUS[order.status]}"
    if order.status == "delivered" and order.delivered_at is not None:
        text += f" on {day(order.delivered_at)}"
    text += f" (total {money(order.total_minor, order.currency)})"
    if order.refund is not None:
        text += (f"; a refund of {money(order.refund.amount_minor, order.refund.currency)} "
                 f"was {_refund_status(order.refund)} on {day(order.refund.created_at)}")
    return f"{text} {SOURCE_TAG}."


def order_list(orders: list[Order]) -> str:
    if not orders:
        return f"There are no orders on your account {SOURCE_TAG}."
    parts = [f"#{o.order_id} {o.status}"
             + (f" {day(o.delivered_at)}" if o.delivered_at and o.status == "delivered" else "")
             + f" ({money(o.total_minor, o.currency)})" for o in orders]
    return f"Your orders: {'; '.join(parts)} {SOURCE_TAG}."


def eligibility(e: Eligibility) -> str:
    n = f"#{e.order_id}"
    delivered = f" was delivered on {day(e.delivered_at)} and" if e.delivered_at else ""
    match e.reason:
        case "eligible":
            assert e.window_ends_at is not None
            text = (f"Your order {n}{delivered} is eligible for a refund of "
                    f"{money(e.refundable_minor, e.currency)} until {day(e.window_ends_at)}")
        case "window_expired":
            assert e.window_ends_at is not None
            text = (f"Your order {n}{delivered} is not eligible for a refund: its refund window "
                    f"ended on {day(e.window_ends_at)}")
        case "already_refunded":
            text = f"Your order {n} has already been refunded"
        case "not_delivered":
            text = (f"Your order {n} has not been delivered yet, so it can't be refunded until "
                    "it arrives")
        case "cancelled":
            text = f"Your order {n} was cancelled, so there is nothing to refund"
        case "no_refundable_items":
            text = (f"Your order {n} has no refundable items (gift cards and personalised "
                    "items can't be refunded)")
    return f"{text} {SOURCE_TAG}."


def _refund_status(refund: Refund) -> str:
    return "approved" if refund.status == "approved" else "requested (pending review)"


def refund_created(refund: Refund, *, replayed: bool) -> str:
    amount = money(refund.amount_minor, refund.currency)
    if refund.status == "approved":
        text = (f"Your refund of {amount} for order #{refund.order_id} is approved "
                f"(refund {refund.refund_id})")
    else:
        text = (f"Your refund request of {amount} for order #{refund.order_id} has been "
                f"passed to our team for review (refund {refund.refund_id})")
    if replayed:
        text += "; this repeats an earlier identical request, so nothing new was created"
    return f"{text} {SOURCE_TAG}."


def idempotency_conflict() -> str:
    return ("That idempotency key was already used for a different refund request, so nothing "
            f"was done {SOURCE_TAG}.")


def invalid_argument(detail: str) -> str:
    return f"I can't run that request: {detail}."
