"""The agent's vocabulary: business records from the database, tool calls and their results,
decisions, and the response that keeps business facts apart from the cited policy answer."""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

from citadel.records import Answer

MAX_ORDER_ID = 9_999_999_999
CUSTOMER_ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
IDEMPOTENCY_KEY_PATTERN = r"^[A-Za-z0-9_.:-]{8,128}$"


def _integral(value: Any) -> Any:
    # JSON Schema counts 1042.0 as an integer, so the API schema promises to accept it;
    # strings and fractions are still refused (strict).
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


OrderId = Annotated[int, Field(ge=1, le=MAX_ORDER_ID, strict=True), BeforeValidator(_integral)]
CustomerId = Annotated[str, Field(pattern=CUSTOMER_ID_PATTERN)]


def _clean_reason(value: str) -> str:
    return re.sub(r"\s+", " ", value).strip()


IdempotencyKey = Annotated[str, Field(pattern=IDEMPOTENCY_KEY_PATTERN)]
Reason = Annotated[str, Field(max_length=500), AfterValidator(_clean_reason)]


class Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Caller(Record):
    """Who is asking: resolved from an API key or the CLI's --customer, never from content."""

    customer_id: CustomerId
    name: str = ""
    actor: str = Field(description="How the caller authenticated: 'api_key:<id>' or 'cli'.")
    tenant: str | None = Field(
        default=None, description="The customer's knowledge-base tenant (business database): "
                                  "knowledge answers see its documents and public ones.")


class OrderItem(Record):
    sku: str
    description: str
    category: str
    quantity: int
    unit_price_minor: int


class Refund(Record):
    refund_id: int
    order_id: int
    amount_minor: int
    currency: str
    status: Literal["approved", "pending_review"]
    reason: str
    rules_version: str
    created_at: dt.datetime


class Order(Record):
    order_id: int
    status: Literal["placed", "shipped", "delivered", "cancelled"]
    placed_at: dt.datetime
    delivered_at: dt.datetime | None
    total_minor: int
    currency: str
    items: tuple[OrderItem, ...] = ()
    refund: Refund | None = None


class RefundRules(Record):
    version: str
    effective_from: dt.datetime
    window_days: int
    refundable_statuses: tuple[str, ...]
    non_refundable_categories: tuple[str, ...]
    auto_approve_limit_minor: int


EligibilityReason = Literal[
    "eligible", "not_delivered", "cancelled", "already_refunded", "window_expired",
    "no_refundable_items",
]


class Eligibility(Record):
    order_id: int
    eligible: bool
    reason: EligibilityReason
    refundable_minor: int
    currency: str
    delivered_at: dt.datetime | None
    window_ends_at: dt.datetime | None
    rules_version: str
    checked_at: dt.datetime


ToolName = Literal["get_order", "list_orders", "check_refund_eligibility", "request_refund"]

Outcome = Literal[
    "ok", "not_found", "invalid_argument", "not_eligible", "refund_created", "refund_replayed",
    "idempotency_conflict", "unavailable",
]


class ToolCall(Record):
    """A tool the decider chose, with its arguments. There is no customer argument: tools are
    bound to the authenticated caller when they are constructed."""

    name: ToolName
    arguments: dict[str, Any] = Field(default_factory=dict)


class ToolResult(Record):
    """A fact from the order system, with the call that produced it."""

    call: ToolCall
    outcome: Outcome
    summary: str = Field(description="One sentence for the customer, from database values.")
    data: dict[str, Any] = Field(default_factory=dict)
    source: Literal["order system"] = "order system"
    authoritative: Literal[True] = True


Intent = Literal["order_status", "list_orders", "refund_eligibility", "request_refund",
                 "policy"]


class Decision(Record):
    intent: Intent
    tool_calls: tuple[ToolCall, ...] = ()
    policy_question: str | None = Field(
        default=None, description="What to ask the knowledge base, if anything.")
    decider: str = "rules"
    notes: tuple[str, ...] = ()


class AgentResponse(Record):
    request_id: str
    customer_id: str
    intent: Intent
    decider: str
    message: str = Field(description="Business facts first (order system), then cited policy.")
    business: tuple[ToolResult, ...] = ()
    business_available: bool = True
    answer: Answer | None = Field(default=None, description="The policy answer, gated citations.")
    degraded: bool = False
    degraded_reasons: tuple[str, ...] = ()
