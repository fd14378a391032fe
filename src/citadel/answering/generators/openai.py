"""A generator backed by any server speaking the OpenAI chat-completions protocol (hosted
APIs, vLLM, the llama.cpp server, Ollama).

The model sees the context blocks labelled `[S1]`... (highest authority first) under a
versioned prompt, and answers `{answer, citations: [{id, quote}], confidence}` — through the
server's JSON-schema mode when it has one (ids restricted to this request's labels), else
JSON-object mode, else plain text parsed defensively. It returns a `Draft` of labels and
quotes like every generator; the gate verifies them. When the gated draft is refused
(`draft_review`), the engine calls `generate` once more with the problems named, under the
stricter retry prompt.

A transport failure (timeout, connection error, 429/5xx after bounded retries) raises
`ChatError`: the engine turns it into a degraded abstention, never into citation-shaped text.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from typing import Any

from citadel.answering.draft_review import review
from citadel.answering.generators.base import Generator
from citadel.answering.generators.chat_client import ChatClient, FormatRejected, Message
from citadel.answering.generators.inline_markers import SentenceStream, draft_sentence
from citadel.answering.generators.relabel import relabel_draft, relabel_sentence
from citadel.answering.generators.structured_output import (
    ANSWER_SCHEMA_NAME,
    OutputError,
    answer_schema,
    is_factual,
    is_refusal,
    parse_structured,
    to_draft,
)
from citadel.answering.prompts import Prompt
from citadel.gate import GateResult
from citadel.records import Context, ContextBlock, Draft, DraftSentence, RetryFeedback

JSON_MODES = ("auto", "json_schema", "json_object", "off")
log = logging.getLogger("citadel.llm")


def display_order(context: Context) -> list[ContextBlock]:
    """The blocks as the model sees them: highest authority first (stable)."""
    order = sorted(enumerate(context.blocks), key=lambda ib: (-ib[1].chunk.authority, ib[0]))
    return [block for _, block in order]


def display_labels(context: Context) -> str:
    """The labels in the order the blocks are shown (a small model reads "S1, S2" as the
    first and second block it sees)."""
    return ", ".join(b.label for b in display_order(context))


def render_context(context: Context) -> str:
    """The blocks, highest authority first (stable), each headed by its label and its
    title › section and effective date. Source paths are not shown: the model must cite
    labels, never file names."""
    parts = []
    for block in display_order(context):
        chunk = block.chunk
        heading = " › ".join(p for p in (chunk.title, chunk.section) if p)
        if chunk.effective_date:
            heading += f" (effective {chunk.effective_date.isoformat()})"
        parts.append(f"[{block.label}] {heading}\n{chunk.content.strip()}")
    return "\n\n".join(parts)


def format_problems(feedback: RetryFeedback) -> str:
    return "\n".join(f"- {p}" for p in feedback.problems)


class OpenAIGenerator(Generator):
    max_attempts = 2
    decides = True  # the model decides whether the context answers (see Engine._prepare)

    def __init__(
        self,
        client: ChatClient,
        prompt: Prompt,
        retry_prompt: Prompt,
        *,
        stream_prompt: Prompt | None = None,
        json_mode: str = "auto",
        support_threshold: float = 0.5,
    ) -> None:
        if json_mode not in JSON_MODES:
            raise ValueError(f"json_mode must be one of {JSON_MODES}, not {json_mode!r}")
        self.client = client
        self.prompt = prompt
        self.retry_prompt = retry_prompt
        self.stream_prompt = stream_prompt
        self.streams_sentences = stream_prompt is not None
        self.json_mode = json_mode
        self.support_threshold = support_threshold
        self.name = f"openai:{client.config.model}"
        self.prompt_version = prompt.version
        self.owned: Any = None  # a model server this generator started (generator = local)

    def complete(self, messages: list[dict[str, str]]) -> str | None:
        return self.client.complete(messages)

    def close(self) -> None:
        if self.owned is not None:
            self.owned.close()
            self.owned = None

    def __repr__(self) -> str:
        return f"OpenAIGenerator({self.client!r}, prompt={self.prompt.version!r})"

    def messages(
        self, question: str, context: Context, feedback: RetryFeedback | None = None
    ) -> tuple[Prompt, list[Message]]:
        prompt = self.retry_prompt if feedback is not None else self.prompt
        values = {
            "labels": display_labels(context),
            "context": render_context(context),
            "question": question,
            "problems": format_problems(feedback) if feedback is not None else "",
        }
        return prompt, prompt.render(**values)

    def generate(
        self, question: str, context: Context, feedback: RetryFeedback | None = None
    ) -> Draft:
        prompt, messages = self.messages(question, context, feedback)
        labels = [b.label for b in context.blocks]
        t0 = time.perf_counter()
        text = self._complete(messages, labels, prompt)
        try:
            parsed = parse_structured(text)
        except OutputError as exc:
            draft = Draft(failure=str(exc), generator=self.name, prompt_version=prompt.version)
        else:
            draft = relabel_draft(
                to_draft(parsed, generator=self.name, prompt_version=prompt.version), context)
        # Versions and outcome only: the question, context and reply may hold personal data.
        log.info("model %s answered (prompt %s) in %.0f ms: %s", self.client.config.model,
                 prompt.version, (time.perf_counter() - t0) * 1000,
                 "unparseable" if draft.failure else "abstained" if draft.abstain else
                 f"{len(draft.sentences)} sentence(s)")
        return draft

    def stream_draft(
        self, question: str, context: Context, feedback: RetryFeedback | None = None
    ) -> Iterator[DraftSentence | Draft]:
        """Stream the model's answer: each sentence as soon as it is complete (with its inline
        `[S1: "quote"]` markers read as citations), then the whole `Draft` as the last item."""
        if self.stream_prompt is None:
            raise ValueError("this generator has no stream prompt")
        prompt = self.stream_prompt
        problems = ""
        if feedback is not None:
            problems = ("Your previous answer to this question was rejected because:\n"
                        + format_problems(feedback) + "\nFollow every rule exactly.")
        messages = prompt.render(labels=display_labels(context),
                                 context=render_context(context), question=question,
                                 problems=problems)
        splitter = SentenceStream()
        sentences: list[DraftSentence] = []
        parts: list[str] = []
        refusals = 0
        moved: list[int] = []
        for delta in self.client.stream(messages):
            parts.append(delta)
            for sentence in splitter.feed(delta):
                if is_refusal(sentence):  # an abstention, never released as an answer
                    refusals += 1
                    continue
                sentences.append(self._relabelled(draft_sentence(sentence), context, moved))
                yield sentences[-1]
        for sentence in splitter.close():
            if is_refusal(sentence):
                refusals += 1
                continue
            sentences.append(self._relabelled(draft_sentence(sentence), context, moved))
            yield sentences[-1]
        if refusals and not sentences:
            yield Draft(abstain=True, generator=self.name, prompt_version=prompt.version)
            return
        draft = self._streamed_draft("".join(parts), sentences, prompt.version)
        if draft.sentences == tuple(sentences):
            draft = draft.model_copy(update={"relabelled": sum(moved)})
        else:  # a JSON reply read whole
            draft = relabel_draft(draft, context)
        yield draft

    @staticmethod
    def _relabelled(sentence: DraftSentence, context: Context, moved: list[int]
                    ) -> DraftSentence:
        sentence, n = relabel_sentence(sentence, context)
        moved.append(n)
        return sentence

    def _streamed_draft(
        self, text: str, sentences: list[DraftSentence], prompt_version: str
    ) -> Draft:
        common = dict(generator=self.name, prompt_version=prompt_version)
        if not sentences:
            return Draft(failure="the answer is empty", **common)
        if text.lstrip().startswith(("{", "```")):  # the model answered in JSON anyway
            try:
                return to_draft(parse_structured(text), **common)
            except OutputError:
                pass
        if not any(s.citations for s in sentences) and not any(
                is_factual(s.text) for s in sentences):
            return Draft(abstain=True, **common)
        return Draft(sentences=tuple(sentences), **common)

    def review(self, draft: Draft, result: GateResult) -> RetryFeedback | None:
        return review(draft, result, support_threshold=self.support_threshold)

    def response_formats(
        self, labels: list[str], prompt: Prompt | None = None
    ) -> list[dict[str, Any] | None]:
        """What to ask for, best first; `auto` falls back when the server refuses one."""
        schema = answer_schema(labels, (prompt or self.prompt).fields)
        json_schema = {"type": "json_schema",
                       "json_schema": {"name": ANSWER_SCHEMA_NAME, "strict": True,
                                       "schema": schema}}
        # llama-cpp-python's server takes a schema inside json_object mode (and refuses
        # json_schema); servers that do neither ignore the key or refuse it, and we fall back.
        object_with_schema = {"type": "json_object", "schema": schema}
        by_mode: dict[str, list[dict[str, Any] | None]] = {
            "auto": [json_schema, object_with_schema, {"type": "json_object"}, None],
            "json_schema": [json_schema],
            "json_object": [object_with_schema, {"type": "json_object"}],
            "off": [None],
        }
        return by_mode[self.json_mode]

    def _complete(self, messages: list[Message], labels: list[str], prompt: Prompt) -> str:
        formats = self.response_formats(labels, prompt)
        for i, response_format in enumerate(formats):
            try:
                return self.client.complete(messages, response_format=response_format)
            except FormatRejected:
                if i == len(formats) - 1:
                    raise
        raise AssertionError("unreachable")
