"""The customer-scoped tools: the only way the agent touches business data.

A `CustomerTools` is bound to one authenticated `Caller` when it is built; no tool takes a
customer argument, so nothing a question, a request body, a model or a retrieved chunk says
can widen the scope. Ownership and state are checked in the database inside a transaction,
and every call (valid or not, allowed or not) is written to the audit log with the caller,
the arguments and the outcome.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from citadel.agent import business, wording
from citadel.agent.db import BusinessDB, BusinessUnavailable, Tx
from citadel.agent.eligibility import evaluate, rules_for
from citadel.agent.records import (
    Caller,
    IdempotencyKey,
    Order,
    OrderId,
    Outcome,
    Reason,
    ToolCall,
    ToolName,
    ToolResult,
)

log = logging.getLogger(__name__)


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class _Args(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class OrderArgs(_Args):
    order_id: OrderId


class NoArgs(_Args):
    pass


class RefundArgs(_Args):
    order_id: OrderId
    reason: Reason = ""
    idempotency_key: IdempotencyKey


ARGUMENTS: dict[str, type[_Args]] = {
    "get_order": OrderArgs,
    "list_orders": NoArgs,
    "check_refund_eligibility": OrderArgs,
    "request_refund": RefundArgs,
}


def _problem(exc: ValidationError) -> str:
    e = exc.errors()[0]
    where = ".".join(str(p) for p in e["loc"]) or "arguments"
    return f"{where}: {e['msg']}"


class CustomerTools:
    """Tools for one caller and one request. Cheap to build; build one per request."""

    def __init__(self, db: BusinessDB, caller: Caller, *, request_id: str,
                 now: Callable[[], dt.datetime] = utcnow) -> None:
        self._db = db
        self.caller = caller
        self._request_id = request_id
        self._now = now

    # --- the tools ----------------------------------------------------------------------

    def get_order(self, order_id: int) -> ToolResult:
        return self.call(ToolCall(name="get_order", arguments={"order_id": order_id}))

    def list_orders(self) -> ToolResult:
        return self.call(ToolCall(name="list_orders"))

    def check_refund_eligibility(self, order_id: int) -> ToolResult:
        return self.call(ToolCall(name="check_refund_eligibility",
                                  arguments={"order_id": order_id}))

    def request_refund(self, order_id: int, reason: str, idempotency_key: str) -> ToolResult:
        return self.call(ToolCall(name="request_refund", arguments={
            "order_id": order_id, "reason": reason, "idempotency_key": idempotency_key}))

    # --- dispatch -----------------------------------------------------------------------

    def call(self, call: ToolCall) -> ToolResult:
        """Validate, run in one transaction with its audit entry, map outages to a result."""
        try:
            args = ARGUMENTS[call.name].model_validate(call.arguments)
        except ValidationError as exc:
            detail = _problem(exc)
            result = ToolResult(call=call, outcome="invalid_argument",
                                summary=wording.invalid_argument(detail))
            self._audit_alone(call, "invalid_argument", detail)
            return result
        run: dict[ToolName, Callable[[Tx, Any], tuple[ToolResult, str]]] = {
            "get_order": self._get_order,
            "list_orders": self._list_orders,
            "check_refund_eligibility": self._check,
            "request_refund": self._refund,
        }
        try:
            with self._db.transaction(write=call.name == "request_refund") as tx:
                result, detail = run[call.name](tx, args)
                self._audit(tx, call, result.outcome, detail)
            return result
        except BusinessUnavailable as exc:
            log.warning("business database unavailable for %s: %s", call.name, exc)
            self._audit_alone(call, "unavailable", str(exc))
            return ToolResult(call=call, outcome="unavailable", summary=wording.UNAVAILABLE)

    def _audit(self, tx: Tx, call: ToolCall, outcome: Outcome, detail: str) -> None:
        business.append_audit(
            tx, at=self._now(), request_id=self._request_id, customer_id=self.caller.customer_id,
            actor=self.caller.actor, tool=call.name, arguments=call.arguments, outcome=outcome,
            detail=detail)

    def _audit_alone(self, call: ToolCall, outcome: Outcome, detail: str) -> None:
        try:
            with self._db.transaction() as tx:
                self._audit(tx, call, outcome, detail)
        except BusinessUnavailable:
            # The audit table lives in the unavailable database: keep the record in the log.
            log.error("audit (database unavailable): customer=%s actor=%s tool=%s args=%s "
                      "outcome=%s detail=%s", self.caller.customer_id, self.caller.actor,
                      call.name, call.arguments, outcome, detail)

    def _not_found(self, tx: Tx, call: ToolCall, order_id: int) -> tuple[ToolResult, str]:
        # The customer sees the same answer whether the order is missing or someone else's;
        # the audit log records which, so probing shows up.
        probe = business.order_exists_for_other_customer(tx, self.caller.customer_id, order_id)
        detail = "order belongs to another customer" if probe else "no such order"
        return ToolResult(call=call, outcome="not_found",
                          summary=wording.NOT_FOUND.format(order_id=order_id,
                                                           tag=wording.SOURCE_TAG)), detail

    def _get_order(self, tx: Tx, args: OrderArgs) -> tuple[ToolResult, str]:
        call = ToolCall(name="get_order", arguments=args.model_dump())
        order = business.get_order(tx, self.caller.customer_id, args.order_id)
        if order is None:
            return self._not_found(tx, call, args.order_id)
        return ToolResult(call=call, outcome="ok", summary=wording.order_status(order),
                          data={"order": order.model_dump(mode="json")}), ""

    def _list_orders(self, tx: Tx, args: NoArgs) -> tuple[ToolResult, str]:
        call = ToolCall(name="list_orders")
        orders = business.list_orders(tx, self.caller.customer_id)
        return ToolResult(call=call, outcome="ok", summary=wording.order_list(orders),
                          data={"orders": [o.model_dump(mode="json") for o in orders]}), ""

    def _eligibility(self, tx: Tx, order: Order):
        rules = rules_for(order, business.refund_rules(tx))
        return rules, evaluate(order, rules, self._now())

    def _check(self, tx: Tx, args: OrderArgs) -> tuple[ToolResult, str]:
        call = ToolCall(name="check_refund_eligibility", arguments=args.model_dump())
        order = business.get_order(tx, self.caller.customer_id, args.order_id)
        if order is None:
            return self._not_found(tx, call, args.order_id)
        _, e = self._eligibility(tx, order)
        return ToolResult(call=call, outcome="ok", summary=wording.eligibility(e),
                          data={"eligibility": e.model_dump(mode="json")}), e.reason

    def _refund(self, tx: Tx, args: RefundArgs) -> tuple[ToolResult, str]:
        call = ToolCall(name="request_refund", arguments=args.model_dump())
        customer = self.caller.customer_id
        # Lock the order row first: a concurrent identical request waits here and then sees
        # the refund this one created (PostgreSQL; SQLite already holds the write lock).
        order = business.get_order(tx, customer, args.order_id, lock=True)
        earlier = business.refund_by_key(tx, customer, args.idempotency_key)
        if earlier is not None:
            if earlier.order_id != args.order_id:
                return ToolResult(call=call, outcome="idempotency_conflict",
                                  summary=wording.idempotency_conflict()), \
                    f"key used for order {earlier.order_id}"
            return ToolResult(call=call, outcome="refund_replayed",
                              summary=wording.refund_created(earlier, replayed=True),
                              data={"refund": earlier.model_dump(mode="json")}), \
                f"refund {earlier.refund_id}"
        if order is None:
            return self._not_found(tx, call, args.order_id)
        rules, e = self._eligibility(tx, order)
        if not e.eligible:
            return ToolResult(call=call, outcome="not_eligible", summary=wording.eligibility(e),
                              data={"eligibility": e.model_dump(mode="json")}), e.reason
        status = ("approved" if e.refundable_minor <= rules.auto_approve_limit_minor
                  else "pending_review")
        refund = business.insert_refund(
            tx, customer_id=customer, order_id=order.order_id,
            idempotency_key=args.idempotency_key, amount_minor=e.refundable_minor,
            currency=order.currency, reason=args.reason or "customer request", status=status,
            rules_version=rules.version, now=self._now())
        if refund is None:  # a unique constraint caught a race the lock did not
            again = business.refund_by_key(tx, customer, args.idempotency_key)
            if again is not None and again.order_id == args.order_id:
                return ToolResult(call=call, outcome="refund_replayed",
                                  summary=wording.refund_created(again, replayed=True),
                                  data={"refund": again.model_dump(mode="json")}), \
                    f"refund {again.refund_id}"
            order = business.get_order(tx, customer, args.order_id)
            assert order is not None
            _, e = self._eligibility(tx, order)
            return ToolResult(call=call, outcome="not_eligible", summary=wording.eligibility(e),
                              data={"eligibility": e.model_dump(mode="json")}), e.reason
        return ToolResult(call=call, outcome="refund_created",
                          summary=wording.refund_created(refund, replayed=False),
                          data={"refund": refund.model_dump(mode="json"),
                                "eligibility": e.model_dump(mode="json")}), \
            f"refund {refund.refund_id} {status}"
