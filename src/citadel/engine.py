"""The Engine wires the stages in order and owns each request's trace.

Every request-scoped value (trace, retrieved set, context labels, flags) is a local of
`answer()`: the engine itself holds only read-only collaborators, so concurrent requests
cannot see each other's state.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from citadel.backends import RetrievalError, SearchIndex, get_backend
from citadel.citations import GateResult, gate
from citadel.config import Settings
from citadel.context import build_context
from citadel.draft_review import attempt_record
from citadel.embedders import Embedder, get_embedder
from citadel.fallbacks import (
    NO_SOURCES,
    RETRIEVAL_FAILED,
    RETRIEVAL_NEXT_STEP,
    abstention_text,
    describe_missing,
    sources_consulted,
)
from citadel.generators import Generator, get_generator
from citadel.records import (
    Answer,
    Context,
    Draft,
    DroppedCitation,
    GenerationAttempt,
    RankedChunk,
    RetryFeedback,
    Trace,
)
from citadel.snapshots import Catalog, incompatibilities, runtime_fingerprint


class NotReady(RuntimeError):
    """The engine cannot serve: no active snapshot, or one that does not fit the config."""


class InvalidQuestion(ValueError):
    """The question cannot be answered as given (empty, too long)."""


@dataclass
class _RequestTrace:
    """Mutable while one request runs; frozen into a `Trace` at the end."""

    request_id: str
    fields: dict[str, Any] = field(default_factory=dict)
    latencies_ms: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.latencies_ms[name] = round((time.perf_counter() - t0) * 1000, 3)

    def freeze(self) -> Trace:
        total = sum(self.latencies_ms.values())
        return Trace(request_id=self.request_id,
                     latencies_ms={**self.latencies_ms, "total": round(total, 3)}, **self.fields)


class Engine:
    def __init__(
        self,
        settings: Settings,
        index: SearchIndex,
        embedder: Embedder,
        generator: Generator,
    ) -> None:
        self.settings = settings
        self.index = index
        self.embedder = embedder
        self.generator = generator

    @classmethod
    def open(
        cls,
        settings: Settings | None = None,
        *,
        embedder: Embedder | None = None,
        generator: Generator | None = None,
    ) -> Engine:
        """Open the active snapshot, refusing one that is incomplete or incompatible."""
        settings = settings or Settings.load()
        catalog = Catalog(settings.home)
        snapshot_id = catalog.alias()
        if snapshot_id is None:
            raise NotReady(
                f"no active knowledge base in {settings.home}: run `citadel ingest PATH` first"
            )
        info = catalog.get(snapshot_id)
        if info is None or info.state != "complete":
            raise NotReady(f"active snapshot {snapshot_id} is not complete")
        embedder = embedder or get_embedder(settings.embedder)
        diffs = incompatibilities(info.fingerprint, runtime_fingerprint(embedder))
        if diffs:
            raise NotReady(
                f"active snapshot {snapshot_id} does not match the running configuration: "
                + "; ".join(diffs)
            )
        index = get_backend(settings).open(
            snapshot_id, settings.dense_weight, settings.candidates
        )
        return cls(settings, index, embedder, generator or get_generator(settings))

    def close(self) -> None:
        self.index.close()

    def validate_question(self, question: str) -> str:
        if not isinstance(question, str) or not question.strip():
            raise InvalidQuestion("the question is empty")
        if len(question) > self.settings.max_question_chars:
            raise InvalidQuestion(
                f"the question is {len(question)} characters long; the limit is "
                f"{self.settings.max_question_chars}"
            )
        return question.strip()

    def answer(
        self,
        question: str,
        *,
        top_k: int | None = None,
        tenant: str | None = None,
        category: str | None = None,
        request_id: str | None = None,
    ) -> Answer:
        question = self.validate_question(question)
        trace = _RequestTrace(request_id or uuid.uuid4().hex)
        trace.fields.update(
            question_sha256=hashlib.sha256(question.encode()).hexdigest(),
            backend=self.index.backend,
            strategy=self.index.strategy,
            snapshot_id=self.index.snapshot_id,
            generator=self.generator.name,
            prompt_version=self.generator.prompt_version,
            retrieval_config_version=self.settings.retrieval_config_version,
        )
        try:
            with trace.stage("retrieve"):
                ranked = self.retrieve(question, top_k, tenant, category)
        except RetrievalError as exc:
            trace.fields.update(retrieval_ok=False, fallback_used=True, degraded=True,
                                degraded_reasons=(f"retrieval: {exc}",))
            return Answer(answer=RETRIEVAL_FAILED, grounded=False, abstained=True,
                          degraded=True, missing=describe_missing(question),
                          next_step=RETRIEVAL_NEXT_STEP, trace=trace.freeze())
        trace.fields["retrieved"] = tuple(r.chunk_id for r in ranked)

        with trace.stage("build_context"):
            context = build_context(
                ranked,
                self.settings.max_context,
                authority_weight=self.settings.authority_weight,
                max_per_document=self.settings.max_per_document,
            )
        trace.fields.update(context_labels=context.labels,
                            citations_available=bool(context.blocks))
        if not context.blocks:
            trace.fields["fallback_used"] = True
            return self._abstain(question, context, trace, NO_SOURCES)

        try:
            draft, result, accepted = self.generate_and_gate(question, context, trace)
        except Exception as exc:  # a generator fault costs the answer, never integrity
            trace.fields.update(degraded=True, fallback_used=True,
                                degraded_reasons=(f"generator: {type(exc).__name__}: {exc}",))
            answer = self._abstain(question, context, trace)
            return answer.model_copy(update={"degraded": True})
        if not accepted or draft.abstain or not result.sentences:
            return self._abstain(question, context, trace)
        trace.fields["citations_emitted"] = len(result.citations)
        return self._grounded(result, context, trace)

    def generate_and_gate(
        self, question: str, context: Context, trace: _RequestTrace
    ) -> tuple[Draft, GateResult, bool]:
        """Generate, gate, and let the generator review the gated draft; a generator with
        `max_attempts` > 1 is asked again with the problems named. Returns the last draft,
        its gate result, and whether it was accepted. Every attempt's drops go to the trace."""
        attempts: list[GenerationAttempt] = []
        dropped: list[DroppedCitation] = []
        feedback: RetryFeedback | None = None
        for n in range(max(1, self.generator.max_attempts)):
            suffix = "" if n == 0 else f"_retry{n}"
            with trace.stage("generate" + suffix):
                draft = (self.generator.generate(question, context) if feedback is None
                         else self.generator.generate(question, context, feedback))
            with trace.stage("gate" + suffix):
                result = gate(draft, context, self.index.snapshot_id)
            feedback = self.generator.review(draft, result)
            attempts.append(attempt_record(draft, result, feedback))
            dropped.extend(result.dropped)
            trace.fields.update(attempts=tuple(attempts), citations_dropped=tuple(dropped),
                                prompt_version=draft.prompt_version,
                                retry_reason=attempts[0].problem if n else None)
            if feedback is None:
                break
        return draft, result, feedback is None

    def retrieve(
        self, question: str, top_k: int | None, tenant: str | None, category: str | None
    ) -> list[RankedChunk]:
        k = top_k or self.settings.top_k
        try:
            vector = self.embedder.embed_query(question)
            return self.index.search(question, vector, k, tenant=tenant, category=category)
        except RetrievalError:
            raise
        except Exception as exc:  # any backend fault is a retrieval failure, never a crash
            raise RetrievalError(f"{type(exc).__name__}: {exc}") from exc

    def _abstain(
        self, question: str, context: Context, trace: _RequestTrace, reason: str | None = None
    ) -> Answer:
        return Answer(
            answer=abstention_text(question),
            grounded=False,
            abstained=True,
            missing=describe_missing(question),
            sources_consulted=sources_consulted(context),
            next_step=self.settings.next_step if reason is None else f"{reason} "
            f"{self.settings.next_step}",
            trace=trace.freeze(),
        )

    def _grounded(self, result: GateResult, context: Context, trace: _RequestTrace) -> Answer:
        return Answer(
            answer=result.render(),
            citations=result.citations,
            grounded=True,
            abstained=False,
            sources_consulted=sources_consulted(context),
            trace=trace.freeze(),
        )
