"""An OpenAI-compatible tool-calling decider (chat-completions `tools` protocol, over httpx).

The model sees the versioned system prompt and the customer's request, never a retrieved
chunk. What it returns is a proposal, checked before anything runs:

* only the four tools (plus `answer_policy_question`), with exactly their arguments (a
  `customer_id` or any other extra argument drops the call);
* only order numbers the customer named (in the question or the request's order id);
* `request_refund` only when the deterministic reading of the customer's own words is also a
  refund request for that order; otherwise it becomes `check_refund_eligibility`.

Any transport or format failure falls back to the rule-based decider, with a note saying why.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from citadel.agent.decider import (
    REFUND_POLICY_QUESTION,
    RuleDecider,
    classify,
    order_ids,
    reason_from,
)
from citadel.agent.records import Decision, Intent, ToolCall

PROMPT_VERSION = "decider-v1"

_ORDER_ID = {"type": "integer", "description": "The order number, e.g. 1042."}
TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {
        "name": "get_order", "description": "Status, delivery date and items of one order.",
        "parameters": {"type": "object", "properties": {"order_id": _ORDER_ID},
                       "required": ["order_id"], "additionalProperties": False}}},
    {"type": "function", "function": {
        "name": "list_orders", "description": "The customer's recent orders.",
        "parameters": {"type": "object", "properties": {}, "additionalProperties": False}}},
    {"type": "function", "function": {
        "name": "check_refund_eligibility",
        "description": "Whether an order can be refunded now, and until when.",
        "parameters": {"type": "object", "properties": {"order_id": _ORDER_ID},
                       "required": ["order_id"], "additionalProperties": False}}},
    {"type": "function", "function": {
        "name": "request_refund",
        "description": "Ask for a refund of a named order (checked by the order system).",
        "parameters": {"type": "object", "properties": {
            "order_id": _ORDER_ID,
            "reason": {"type": "string", "description": "The customer's reason, briefly."}},
            "required": ["order_id"], "additionalProperties": False}}},
    {"type": "function", "function": {
        "name": "answer_policy_question",
        "description": "Look up the shop's policies (returns, shipping, ...) in the help centre.",
        "parameters": {"type": "object", "properties": {"question": {"type": "string"}},
                       "required": ["question"], "additionalProperties": False}}},
]
_ALLOWED_ARGS = {"get_order": {"order_id"}, "list_orders": set(),
                 "check_refund_eligibility": {"order_id"},
                 "request_refund": {"order_id", "reason"},
                 "answer_policy_question": {"question"}}
_INTENT_OF = {"request_refund": "request_refund", "check_refund_eligibility": "refund_eligibility",
              "get_order": "order_status", "list_orders": "list_orders"}
_PRIORITY: tuple[Intent, ...] = ("request_refund", "refund_eligibility", "order_status",
                                 "list_orders")


class DeciderError(RuntimeError):
    """The model's reply could not be used."""


def system_prompt() -> str:
    return (resources.files("citadel.agent") / "prompts" / f"{PROMPT_VERSION}.txt").read_text()


def _order_id(value: Any) -> int:
    if isinstance(value, bool):
        raise DeciderError("order_id is not a number")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("#").isdigit():
        return int(value.strip().lstrip("#"))
    raise DeciderError(f"order_id {value!r} is not a number")


class OpenAIToolDecider:
    name = "openai"

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None,
                 timeout_s: float = 30.0, fallback: RuleDecider | None = None,
                 transport: Any = None) -> None:
        try:
            import httpx
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise RuntimeError("the OpenAI decider needs httpx: pip install 'citadel[server]'") \
                from exc
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(base_url=base_url.rstrip("/") + "/", timeout=timeout_s,
                                    headers=headers, transport=transport)
        self.model = model
        self.fallback = fallback or RuleDecider()

    def close(self) -> None:
        self._client.close()

    def decide(self, question: str, *, order_id: int | None = None) -> Decision:
        try:
            message = self._complete(question, order_id)
            return self._decision(message, question, order_id)
        except Exception as exc:  # any model/transport fault: the deterministic decider decides
            fallback = self.fallback.decide(question, order_id=order_id)
            why = f"openai decider unavailable ({type(exc).__name__}: {exc}); used rules"
            return fallback.model_copy(update={"decider": f"rules (fallback from {self.name})",
                                               "notes": (*fallback.notes, why)})

    def _complete(self, question: str, order_id: int | None) -> dict[str, Any]:
        user = question if order_id is None else f"{question}\n\n(Selected order: #{order_id})"
        body = {
            "model": self.model,
            "messages": [{"role": "system", "content": system_prompt()},
                         {"role": "user", "content": user}],
            "tools": TOOLS,
            "tool_choice": "auto",
            "temperature": 0,
        }
        response = self._client.post("chat/completions", json=body)
        if response.status_code != 200:
            raise DeciderError(f"HTTP {response.status_code}")
        try:
            message = response.json()["choices"][0]["message"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise DeciderError("reply is not a chat completion") from exc
        if not isinstance(message, dict):
            raise DeciderError("reply message is not an object")
        return message

    def _decision(self, message: dict[str, Any], question: str,
                  order_id: int | None) -> Decision:
        named = order_ids(question, order_id)
        own_reading = classify(question, named)
        calls: list[ToolCall] = []
        notes: list[str] = []
        policy_question: str | None = None
        for raw in message.get("tool_calls") or []:
            try:
                fn = raw["function"]
                name = fn["name"]
                args = fn.get("arguments") or "{}"
                args = json.loads(args) if isinstance(args, str) else args
            except (KeyError, TypeError, ValueError):
                notes.append("dropped a malformed tool call")
                continue
            if name not in _ALLOWED_ARGS or not isinstance(args, dict):
                notes.append(f"dropped unknown tool {str(name)[:40]!r}")
                continue
            extra = set(args) - _ALLOWED_ARGS[name]
            if extra:
                notes.append(f"dropped {name}: unexpected arguments {sorted(extra)}")
                continue
            if name == "answer_policy_question":
                q = args.get("question")
                policy_question = q.strip()[:500] if isinstance(q, str) and q.strip() else None
                continue
            arguments: dict[str, Any] = {}
            if "order_id" in _ALLOWED_ARGS[name]:
                try:
                    oid = _order_id(args.get("order_id"))
                except DeciderError as exc:
                    notes.append(f"dropped {name}: {exc}")
                    continue
                if oid not in named:
                    notes.append(f"dropped {name}: order #{oid} was not named by the customer")
                    continue
                arguments["order_id"] = oid
            if name == "request_refund":
                if own_reading != "request_refund":
                    notes.append(f"request_refund for #{arguments['order_id']} downgraded to "
                                 "check_refund_eligibility: the customer did not ask for one")
                    name = "check_refund_eligibility"
                else:
                    arguments["reason"] = reason_from(question)
            call = ToolCall(name=name, arguments=arguments)
            if call not in calls:
                calls.append(call)
        intents = {_INTENT_OF[c.name] for c in calls}
        intent: Intent = next((i for i in _PRIORITY if i in intents), "policy")
        if intent in ("refund_eligibility", "request_refund") and policy_question is None:
            policy_question = REFUND_POLICY_QUESTION
        elif intent == "policy" and policy_question is None:
            policy_question = question
        return Decision(intent=intent, tool_calls=tuple(calls), policy_question=policy_question,
                        decider=f"{self.name}:{self.model}", notes=tuple(notes))
