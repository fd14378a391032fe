"""The OpenAI chat-completions shapes Citadel reads and writes (`citadel.server.chat`).

Requests are read leniently where clients differ and Citadel has nothing to do (sampling
settings, tools, user ids: accepted and ignored), strictly where a value would change the
answer (`n` must be 1). Responses are OpenAI's, with Citadel's own record under `citadel`.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import PydanticCustomError

from citadel.answering.follow_up import MAX_TURNS
from citadel.knowledge.receipts import Signer
from citadel.records import Answer, Turn
from citadel.server.cited import CitedAnswer, LinkedCitation
from citadel.server.models import TopK

MODEL_ID = "citadel"
_MARKER = re.compile(r"\[(S\d+)\]")


class TextPart(BaseModel):
    model_config = ConfigDict(extra="allow")

    type: str
    text: str | None = None


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")  # name, tool_calls, ...: not Citadel's concern

    role: str
    content: str | list[TextPart] | None = None

    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        return "\n".join(p.text or "" for p in self.content or () if p.type == "text")


class CitadelOptions(BaseModel):
    """Citadel's own request options, in the body's `citadel` object (the OpenAI SDK sends it
    with `extra_body={"citadel": {...}}`)."""

    model_config = ConfigDict(extra="forbid")

    top_k: TopK | None = None
    category: str | None = Field(default=None, max_length=200)


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="allow")  # temperature, max_tokens, tools, user, ...

    model: str = Field(min_length=1, max_length=200)
    messages: list[ChatMessage] = Field(min_length=1, max_length=1000)
    stream: bool = False
    n: int | None = Field(default=None, ge=1, le=1,
                          description="One answer per question: Citadel's answer is one.")
    citadel: CitadelOptions | None = None
    # Other unknown fields are accepted and ignored; this one is refused as on /v1/answer
    # (422 `tenant_not_accepted`, here OpenAI's 400): the tenant comes from the API key.
    tenant: SkipJsonSchema[Any] = Field(default=None, exclude=True)

    @field_validator("tenant", mode="before")
    @classmethod
    def _refuse_tenant(cls, value: Any) -> Any:
        raise PydanticCustomError("extra_forbidden", "Extra inputs are not permitted")

    def question(self) -> str | None:
        """The last user message's text: the question Citadel answers."""
        for message in reversed(self.messages):
            if message.role == "user":
                return message.text()
        return None

    def history(self) -> list[Turn]:
        """The user messages before the last one, the most recent MAX_TURNS: they make a
        follow-up stand alone. Assistant and system messages are not read at all: not
        evidence, not instructions, not words of a question."""
        users = [m.text() for m in self.messages if m.role == "user"][:-1]
        return [Turn(question=q) for q in users if q.strip()][-MAX_TURNS:]


class OpenAIErrorDetail(BaseModel):
    message: str
    type: str = Field(description="invalid_request_error, rate_limit_error or server_error.")
    param: str | None = None
    code: str | None = Field(default=None, description="e.g. invalid_api_key, "
                             "model_not_found, invalid_question, too_large.")
    request_id: str | None = None


class OpenAIError(BaseModel):
    """Errors of the OpenAI-compatible endpoints, in OpenAI's shape."""

    error: OpenAIErrorDetail


CHAT_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": OpenAIError, "description": "A request Citadel cannot answer (no user "
                                              "message, an empty question, invalid fields)."},
    401: {"model": OpenAIError, "description": "Invalid API key, or one is required."},
    404: {"model": OpenAIError, "description": "No such model (the one model is `citadel`)."},
    413: {"model": OpenAIError, "description": "The request body is too large."},
    503: {"model": OpenAIError, "description": "No servable knowledge base."},
}


class Model(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str = "citadel"


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[Model]


def annotations(answer: str, citations: list[LinkedCitation]) -> list[dict[str, Any]]:
    """One `url_citation` per citation, at the marker that refers to it: `answer[start_index:
    end_index]` is the marker (`[S1]`). A label's citations are taken in order by its markers'
    occurrences (the gate writes them sentence by sentence, in that order); a last marker of
    a label carries whatever of it is left."""
    by_label: dict[str, list[LinkedCitation]] = {}
    for c in citations:
        by_label.setdefault(c.label, []).append(c)
    markers = list(_MARKER.finditer(answer))
    left = {label: sum(m.group(1) == label for m in markers) for label in by_label}
    out: list[dict[str, Any]] = []
    for m in markers:
        label = m.group(1)
        queue = by_label.get(label)
        if not queue:
            continue  # a marker without a citation: the gate never writes one
        left[label] -= 1
        if left[label] == 0:  # the label's last marker: whatever is left
            taken, by_label[label] = queue, []
        elif len(queue) == 1:  # more markers than citations: each shows the last one
            taken = queue
        else:
            taken, by_label[label] = queue[:1], queue[1:]
        out += [{"type": "url_citation", "url_citation": {
            "url": c.url, "title": c.title + (f" — {c.section}" if c.section else ""),
            "start_index": m.start(), "end_index": m.end(), "label": c.label,
            "quote": c.quote}} for c in taken]
    return out


def completion(answer: Answer, page_url: str, created: int, signer: Signer | None
               ) -> dict[str, Any]:
    """A non-streamed `chat.completion` carrying a gated answer (signed by `signer`, links
    included)."""
    cited = CitedAnswer.of(answer, page_url, signer)
    return {
        "id": completion_id(cited.request_id), "object": "chat.completion",
        "created": created, "model": MODEL_ID, "system_fingerprint": cited.snapshot_id,
        "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None, "message": {
            "role": "assistant", "content": cited.answer, "refusal": None,
            "annotations": annotations(cited.answer, cited.citations)}}],
        "citadel": cited.model_dump(mode="json"),
    }


def completion_id(request_id: str) -> str:
    return f"chatcmpl-{request_id}"
