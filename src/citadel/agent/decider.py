"""The decision step: intent and tool calls from the customer's own request, nothing else.

`RuleDecider` is the deterministic default. It reads only the question and the structured
order id of the request; retrieved chunks do not exist yet when it runs, so nothing in the
knowledge base can choose a tool. The OpenAI-compatible tool-calling decider
(`citadel.agent.openai_decider`) has the same interface and is checked against this one.
"""

from __future__ import annotations

import re
from typing import Protocol

from citadel.agent.records import Decision, Intent, ToolCall

# What the knowledge base is asked when the customer asks about refunding an order: a fixed
# question, so the cited policy does not depend on how the request was phrased.
REFUND_POLICY_QUESTION = "How long do I have to return an item?"
MAX_ORDERS_PER_REQUEST = 3

_ORDER_REF = re.compile(
    r"(?:\border\b(?:\s+(?:number|no\.?|num|id))?\s*[:#]?\s*|#\s*)(\d{1,20})(?!\d)", re.I)
_REFUND = re.compile(r"\b(refunds?|refunded|refundable|money back|return(?:ed|ing|s)?|"
                     r"send (?:it|them) back)\b", re.I)
_ASKS_ELIGIBILITY = re.compile(
    r"\b(eligible|eligibility|qualif(?:y|ies)|can i|could i|am i able|is it possible|"
    r"still|allowed|too late|deadline|until when)\b|^\s*(?:can|could|is|am|do|does|will)\b",
    re.I)
_WANTS_ACTION = re.compile(
    r"\b(i want|i'd like|i would like|please|request|start|issue|process|give me|get me|"
    r"i need|go ahead|approve)\b|^\s*refund\b", re.I)
_STATUS = re.compile(r"\b(status|where|track(?:ing)?|deliver(?:ed|y)?|shipped|shipping|arriv"
                     r"(?:e|ed|ing)|when will|what happened|late)\b", re.I)
_LIST = re.compile(r"\b(my orders|list|order history|recent orders|all orders|orders do i have|"
                   r"what did i (?:order|buy))\b", re.I)
_MY_ORDER = re.compile(r"\bmy (?:last |latest |recent )?(order|purchase|parcel|package|item)s?\b",
                       re.I)


class Decider(Protocol):
    name: str

    def decide(self, question: str, *, order_id: int | None = None) -> Decision: ...


def order_ids(question: str, order_id: int | None = None) -> list[int]:
    """Order numbers the customer named: the request's structured id first, then the text's.
    Numbers too long to be an order id are kept so the tool rejects them as invalid."""
    ids: list[int] = [order_id] if order_id is not None else []
    for match in _ORDER_REF.finditer(question):
        n = int(match.group(1))
        if n not in ids:
            ids.append(n)
    return ids[:MAX_ORDERS_PER_REQUEST]


def classify(question: str, ids: list[int]) -> Intent:
    refundish = bool(_REFUND.search(question))
    if refundish and (ids or _MY_ORDER.search(question)):
        if _WANTS_ACTION.search(question) and not _ASKS_ELIGIBILITY.search(question):
            return "request_refund" if ids else "refund_eligibility"
        return "refund_eligibility"
    if ids:
        return "order_status"
    if _LIST.search(question) or (_STATUS.search(question) and _MY_ORDER.search(question)):
        return "list_orders"
    return "policy"


def reason_from(question: str) -> str:
    return re.sub(r"\s+", " ", question).strip()[:500]


def calls_for(intent: Intent, ids: list[int], question: str) -> tuple[ToolCall, ...]:
    if intent == "list_orders" or (intent in ("refund_eligibility", "request_refund")
                                   and not ids):
        return (ToolCall(name="list_orders"),)
    if intent == "order_status":
        return tuple(ToolCall(name="get_order", arguments={"order_id": i}) for i in ids)
    if intent == "refund_eligibility":
        return tuple(ToolCall(name="check_refund_eligibility", arguments={"order_id": i})
                     for i in ids)
    if intent == "request_refund":
        # The idempotency key is added by the agent, from the request or derived from it.
        return tuple(ToolCall(name="request_refund",
                              arguments={"order_id": i, "reason": reason_from(question)})
                     for i in ids)
    return ()


def policy_question_for(intent: Intent, question: str) -> str | None:
    if intent in ("refund_eligibility", "request_refund"):
        return REFUND_POLICY_QUESTION
    if intent == "policy":
        return question
    return None


class RuleDecider:
    """Deterministic: the same request always yields the same decision."""

    name = "rules"

    def decide(self, question: str, *, order_id: int | None = None) -> Decision:
        ids = order_ids(question, order_id)
        intent = classify(question, ids)
        notes: tuple[str, ...] = ()
        if intent in ("refund_eligibility", "request_refund") and not ids:
            notes = ("no order number given: listing the customer's orders",)
        return Decision(intent=intent, tool_calls=calls_for(intent, ids, question),
                        policy_question=policy_question_for(intent, question),
                        decider=self.name, notes=notes)
