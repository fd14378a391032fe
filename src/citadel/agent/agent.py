"""The support agent: decide from the request, run customer-scoped tools, then ask the
knowledge base for the policy — and keep the two apart in the response.

Order of work matters: the decision and every tool call happen before retrieval, so no
retrieved text can select, widen or authorize an action. The policy `Answer` comes from
`Engine.answer` with its gated citations and is attached beside the business facts, never
merged into them. A retrieval outage costs only the policy part (`degraded=True`); a
business-database outage is said plainly and eligibility is never guessed from policy text.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING

from citadel.agent import wording
from citadel.agent.db import BusinessDB
from citadel.agent.decider import Decider
from citadel.agent.records import (
    AgentResponse,
    Caller,
    Decision,
    ToolCall,
    ToolResult,
)
from citadel.agent.tools import CustomerTools, utcnow
from citadel.records import Answer

if TYPE_CHECKING:
    from citadel.engine import Engine

POLICY_UNAVAILABLE = "I can't look up our policy documents right now, so no policy is quoted."
ASK_WHICH_ORDER = "Which order do you mean? Tell me its number (for example #{example})."
_LABEL = re.compile(r"\[(S\d+)\]")


class InvalidRequest(ValueError):
    """The request cannot be handled as given (empty or too long question)."""


def derived_idempotency_key(customer_id: str, order_id: int) -> str:
    """Retries of the same refund request without a client key map to the same refund."""
    digest = hashlib.sha256(f"{customer_id}\x00{order_id}\x00refund".encode()).hexdigest()
    return f"auto-{digest[:32]}"


def with_chunk_ids(answer: Answer) -> str:
    """The answer text with per-request labels replaced by the cited chunk ids."""
    ids = {c.label: c.chunk_id for c in answer.citations}
    text = _LABEL.sub(lambda m: f"[{ids[m.group(1)]}]" if m.group(1) in ids else "",
                      answer.answer)
    return re.sub(r"\s{2,}", " ", text).strip()


class SupportAgent:
    """Read-only collaborators only; every request's state is local to `respond`."""

    def __init__(self, db: BusinessDB, engine: Engine | None, decider: Decider, *,
                 engine_problem: str | None = None, max_question_chars: int = 2000,
                 now: Callable[[], dt.datetime] = utcnow) -> None:
        self.db = db
        self.engine = engine
        self.decider = decider
        self.engine_problem = engine_problem
        self.max_question_chars = max_question_chars
        self._now = now

    def close(self) -> None:
        if self.engine is not None:
            self.engine.close()
        self.db.close()
        close = getattr(self.decider, "close", None)
        if close is not None:
            close()

    def respond(self, question: str, caller: Caller, *, order_id: int | None = None,
                idempotency_key: str | None = None,
                request_id: str | None = None,
                client_request_id: str | None = None) -> AgentResponse:
        question = self._validate(question)
        request_id = request_id or uuid.uuid4().hex
        # 1. Decide from the customer's own request (no retrieval has happened yet).
        decision = self.decider.decide(question, order_id=order_id)
        # 2. Business facts, scoped to the authenticated caller.
        tools = CustomerTools(self.db, caller, request_id=request_id, now=self._now)
        business = tuple(tools.call(self._complete(call, caller, idempotency_key))
                         for call in decision.tool_calls)
        business_ok = all(r.outcome != "unavailable" for r in business)
        # 3. Policy, from the knowledge base, with gated citations.
        answer, policy_problem = self._policy(decision, caller, request_id, client_request_id)
        reasons: list[str] = []
        if not business_ok:
            reasons.append("business: order system unavailable")
        if policy_problem:
            reasons.append(f"knowledge base: {policy_problem}")
        if answer is not None and answer.degraded:
            reasons.extend(f"knowledge base: {r}" for r in answer.trace.degraded_reasons)
        return AgentResponse(
            request_id=request_id, customer_id=caller.customer_id, intent=decision.intent,
            decider=decision.decider,
            message=self._message(decision, business, business_ok, answer, policy_problem),
            business=business, business_available=business_ok, answer=answer,
            degraded=bool(reasons), degraded_reasons=tuple(dict.fromkeys(reasons)),
        )

    def _validate(self, question: str) -> str:
        if not isinstance(question, str) or not question.strip():
            raise InvalidRequest("the question is empty")
        if len(question) > self.max_question_chars:
            raise InvalidRequest(f"the question is {len(question)} characters long; the limit "
                                 f"is {self.max_question_chars}")
        return question.strip()

    @staticmethod
    def _complete(call: ToolCall, caller: Caller, idempotency_key: str | None) -> ToolCall:
        if call.name != "request_refund":
            return call
        order = call.arguments.get("order_id")
        key = idempotency_key
        if key is None and isinstance(order, int):
            key = derived_idempotency_key(caller.customer_id, order)
        return call.model_copy(update={"arguments": {**call.arguments, "idempotency_key": key}})

    def _policy(self, decision: Decision, caller: Caller, request_id: str,
                client_request_id: str | None) -> tuple[Answer | None, str | None]:
        if decision.policy_question is None:
            return None, None
        if self.engine is None:
            return None, self.engine_problem or "no knowledge base is open"
        try:
            # Scoped to the customer's tenant (from the business database, never from the
            # request), exactly as /v1/answer with that tenant's key: its documents and
            # public ones, never another tenant's; no tenant means public documents only.
            return self.engine.answer(decision.policy_question, tenant=caller.tenant,
                                      request_id=request_id,
                                      client_request_id=client_request_id), None
        except Exception as exc:  # the policy is optional; business facts still stand
            return None, f"{type(exc).__name__}: {exc}"

    @staticmethod
    def _message(decision: Decision, business: tuple[ToolResult, ...], business_ok: bool,
                 answer: Answer | None, policy_problem: str | None) -> str:
        parts: list[str] = []
        if not business_ok:
            # Say it once, and say nothing about eligibility: policy text cannot stand in.
            parts.append(wording.UNAVAILABLE)
            parts.extend(r.summary for r in business if r.outcome not in ("unavailable",))
        else:
            parts.extend(r.summary for r in business)
            listed = next((r for r in business if r.call.name == "list_orders"), None)
            if decision.intent in ("refund_eligibility", "request_refund") and listed:
                orders = listed.data.get("orders") or []
                example = orders[0]["order_id"] if orders else 1042
                parts.append(ASK_WHICH_ORDER.format(example=example))
        if decision.policy_question is not None:
            retrieval_failed = answer is not None and not answer.trace.retrieval_ok
            if policy_problem or retrieval_failed:
                parts.append(POLICY_UNAVAILABLE)
            elif answer is not None and answer.grounded:
                text = with_chunk_ids(answer)
                parts.append(text if decision.intent == "policy" else f"Our policy: {text}")
            elif answer is not None and decision.intent == "policy":
                parts.append(answer.answer)
        return " ".join(p for p in parts if p)
