"""The Engine wires the stages in order and owns each request's trace.

Every request-scoped value (trace, retrieved set, context labels, flags) is a local of
`answer()`: the engine itself holds only read-only collaborators, so concurrent requests
cannot see each other's state.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from citadel.answering.conflict_answer import compose as compose_conflict_answer
from citadel.answering.conflicts import check_conflicts
from citadel.answering.context import build_context
from citadel.answering.draft_review import attempt_record, review_answers, review_refusals
from citadel.answering.fallbacks import (
    NO_SOURCES,
    RETRIEVAL_FAILED,
    RETRIEVAL_NEXT_STEP,
    abstention_text,
    describe_missing,
    sources_consulted,
)
from citadel.answering.generators import Generator, get_generator
from citadel.answering.judgement import MODEL_SENTENCES, Judge, for_trace
from citadel.answering.reader_conflicts import kept_conflict, reader_conflict
from citadel.answering.sentence_release import SentenceRelease
from citadel.answering.span_conflicts import span_conflict
from citadel.answering.streaming import DoneEvent, MetaEvent, StreamEvent, answer_events
from citadel.answering.supersession import add_successor_sections
from citadel.config import Settings
from citadel.gate import GateResult, gate
from citadel.knowledge.readiness import readiness
from citadel.knowledge.receipts import Signer
from citadel.knowledge.signing import KeyStore
from citadel.observability.request_log import RequestLog
from citadel.records import (
    Answer,
    Conflict,
    Context,
    Draft,
    DroppedCitation,
    GenerationAttempt,
    RankedChunk,
    RetryFeedback,
    Trace,
)
from citadel.retrieval.backends import (
    Backend,
    RetrievalError,
    SearchIndex,
    SearchResult,
    get_backend,
)
from citadel.retrieval.backends.readiness import alias_mismatch
from citadel.retrieval.embedders import Embedder, get_embedder
from citadel.retrieval.rerankers import Reranker, get_reranker
from citadel.retrieval.rerankers.stage import rerank_stage
from citadel.retrieval.tenancy import request_tenant, visible

_log = logging.getLogger("citadel.engine")


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

    def degrade(self, reason: str) -> None:
        self.fields["degraded"] = True
        self.fields["degraded_reasons"] = (*self.fields.get("degraded_reasons", ()), reason)

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
        *,
        reranker: Reranker | None = None,
        request_log: RequestLog | None = None,
        judge: Judge | None = None,
        signer: Callable[[Answer], Answer] | None = None,
    ) -> None:
        self.settings = settings
        self.signer = signer  # None: answers carry no receipt (unit tests)
        self.index = index
        self.embedder = embedder
        self.generator = generator
        self.reranker = reranker  # None: no rerank stage
        self.request_log = request_log  # None: requests leave no record (unit tests)
        self.judge = judge or Judge.from_settings(settings)
        # A generator the engine made (e.g. one that started a model server) is closed with
        # it; one passed in belongs to the caller. `hand_over` moves it on a snapshot switch.
        self.owns_generator = False

    def hand_over(self, successor: Engine) -> None:
        """Give the generator (and the model server it may run) to the engine replacing
        this one, which shares it; this engine's `close` then leaves it alone."""
        if successor.generator is self.generator:
            successor.owns_generator, self.owns_generator = self.owns_generator, False

    @classmethod
    def open(
        cls,
        settings: Settings | None = None,
        *,
        embedder: Embedder | None = None,
        generator: Generator | None = None,
        reranker: Reranker | None = None,
        request_log: RequestLog | None = None,
        backend: Backend | None = None,
        judge: Judge | None = None,
    ) -> Engine:
        """Open the active snapshot, refusing one that is incomplete or incompatible.

        The reranker, the request log and the judge come from the settings unless given."""
        settings = settings or Settings.load()
        embedder = embedder or get_embedder(settings.embedder)
        owned = backend is None
        backend = backend or get_backend(settings)
        ready = readiness(settings, embedder, backend)
        # An unreachable server does not stop the engine: requests fall back until it returns.
        if (not ready.ok and not ready.backend_unreachable) or ready.active is None:
            if owned:
                backend.close()
            raise NotReady(ready.reason)
        snapshot_id = ready.active
        # Opened first so that the alias check reuses the index's connection.
        index = backend.open(snapshot_id, settings.dense_weight, settings.candidates)
        if owned:
            backend.close()  # takes effect when the index closes: it holds the connection
        mismatch = alias_mismatch(backend, snapshot_id)
        if mismatch:
            index.close()
            raise NotReady(mismatch)
        if request_log is None and settings.log_requests:
            request_log = RequestLog.from_settings(settings)
        judge = judge or Judge.from_settings(settings)
        signer = Signer(KeyStore(settings.home)) if settings.sign_answers else None
        engine = cls(settings, index, embedder, generator or get_generator(settings, judge),
                     reranker=reranker or get_reranker(settings), request_log=request_log,
                     judge=judge, signer=signer)
        engine.owns_generator = generator is None
        return engine

    def close(self) -> None:
        self.index.close()
        if self.reranker is not None:
            self.reranker.close()
        if self.owns_generator:
            self.generator.close()
        if self.request_log is not None:
            self.request_log.close()  # its writer connection; a later record reopens it

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
        client_request_id: str | None = None,
    ) -> Answer:
        question = self.validate_question(question)
        answer = self._signed(self._answer(question, top_k, tenant, category, request_id,
                                           client_request_id))
        self._log(question, answer)
        return answer

    def _signed(self, answer: Answer) -> Answer:
        return self.signer(answer) if self.signer is not None else answer

    def _log(self, question: str, answer: Answer) -> None:
        if self.request_log is not None:
            self.request_log.log_answer(question, answer, self._authorities(answer),
                                        log_question=self.settings.log_questions)

    def _answer(
        self,
        question: str,
        top_k: int | None,
        tenant: str | None,
        category: str | None,
        request_id: str | None,
        client_request_id: str | None,
    ) -> Answer:
        trace, context, early = self._prepare(question, top_k, tenant, category, request_id,
                                              client_request_id)
        if early is not None:
            return early
        try:
            draft, result, accepted = self.generate_and_gate(question, context, trace)
        except Exception as exc:  # a generator fault costs the answer, never integrity
            trace.fields["fallback_used"] = True
            trace.degrade(f"generator: {type(exc).__name__}: {exc}")
            answer = self._abstain(question, context, trace)
            return answer.model_copy(update={"degraded": True})
        if not accepted or draft.abstain or not result.sentences:
            return self._abstain(question, context, trace)
        conflict = self._kept_conflict(result, context, trace)
        if conflict is not None:
            answer = self._conflicted(question, conflict, context, trace)
            if answer is not None:
                return answer
        trace.fields["citations_emitted"] = len(result.citations)
        return self._grounded(result, context, trace)

    def _kept_conflict(
        self, result: GateResult, context: Context, trace: _RequestTrace
    ) -> Conflict | None:
        """A generated answer whose kept sentences cite one side while the reader finds an
        answering sentence of another document that disagrees (`reader_conflicts`). Only a
        model's answer: the extractive answer quotes the sentences the rule already read."""
        if context.judgement is None or not self.generator.decides:
            return None
        with trace.stage("conflicts_after"):
            return kept_conflict(result, context.judgement, context,
                                 authority_gap=self.settings.conflict_authority_gap)

    def _prepare(
        self,
        question: str,
        top_k: int | None,
        tenant: str | None,
        category: str | None,
        request_id: str | None,
        client_request_id: str | None,
    ) -> tuple[_RequestTrace, Context, Answer | None]:
        """Every stage before generation: the trace, the context (with its judgement), and
        the answer when one is already decided (retrieval failed, no sources, a conflict
        answered, no sentence of the context answers), else None."""
        trace = _RequestTrace(request_id or uuid.uuid4().hex)
        trace.fields.update(
            client_request_id=client_request_id,
            question_sha256=hashlib.sha256(question.encode()).hexdigest(),
            backend=self.index.backend,
            strategy=self.index.strategy,
            snapshot_id=self.index.snapshot_id,
            generator=self.generator.name,
            prompt_version=self.generator.prompt_version,
            retrieval_config_version=self.settings.retrieval_config_version,
            reranker=self.reranker.name if self.reranker is not None else "none",
        )
        k = top_k or self.settings.top_k
        # A reranker gets a deeper pool to choose from; the request keeps its best k.
        depth = max(k, self.settings.rerank_depth) if self.reranker is not None else k
        try:
            with trace.stage("retrieve"):
                retrieved = self._search(question, depth, tenant, category)
            ranked = retrieved.ranked
            if self.reranker is not None:
                with trace.stage("rerank"):
                    outcome = rerank_stage(self.reranker, question, ranked,
                                           self.settings.rerank_timeout_ms / 1000)
                trace.fields["rerank_ran"] = outcome.ran
                if outcome.reason is not None:
                    trace.degrade(outcome.reason)  # the fused order stands, unchanged
                ranked = outcome.ranked
            # Stand-ins for superseded sections join the best k (answering.supersession).
            ranked = self._with_successors(ranked[:k], tenant)
        except RetrievalError as exc:
            trace.fields.update(retrieval_ok=False, fallback_used=True)
            trace.degrade(f"retrieval: {exc}")
            return trace, Context(), Answer(
                answer=RETRIEVAL_FAILED, grounded=False, abstained=True, degraded=True,
                missing=describe_missing(question), next_step=RETRIEVAL_NEXT_STEP,
                trace=trace.freeze())
        trace.fields.update(retrieved=tuple(r.chunk_id for r in ranked),
                            malformed_skipped=retrieved.malformed_skipped)

        with trace.stage("build_context"):
            context = build_context(
                ranked,
                self.settings.max_context,
                authority_weight=self.settings.authority_weight,
                freshness_weight=self.settings.freshness_weight,
                max_per_document=self.settings.max_per_document,
            )
        trace.fields.update(
            context_labels=context.labels, citations_available=bool(context.blocks),
            context_dropped=context.dropped, context_notes=context.notes,
            context_weights={"authority_weight": self.settings.authority_weight,
                             "freshness_weight": self.settings.freshness_weight,
                             "conflict_authority_gap": self.settings.conflict_authority_gap},
        )
        if not context.blocks:
            trace.fields["fallback_used"] = True
            return trace, context, self._abstain(question, context, trace, NO_SOURCES)

        with trace.stage("judge"):
            # A model may cite any sentence: the reader reads more of them for it.
            judgement = self.judge.judge(question, context, read=MODEL_SENTENCES
                                         if self.generator.decides else None)
        context = context.model_copy(update={"judgement": judgement})
        trace.fields["judgement"] = for_trace(judgement)

        gap = self.settings.conflict_authority_gap
        with trace.stage("conflicts"):
            conflict = (check_conflicts(question, context, authority_gap=gap)
                        or span_conflict(judgement, context, authority_gap=gap)
                        or reader_conflict(judgement, context, authority_gap=gap))
        if conflict is not None:
            answer = self._conflicted(question, conflict, context, trace)
            if answer is not None:
                return trace, context, answer
        if self.generator.decides and not judgement.relevant:
            # A model decides by itself whether the context answers; it is not asked only
            # when the judgement finds the context certainly irrelevant (below the floor).
            trace.fields["generation_skipped"] = "the context is certainly irrelevant"
            return trace, context, self._abstain(question, context, trace)
        if not self.generator.decides and not judgement.answerable:
            # No sentence answers: abstain before the generator is called.
            trace.fields["generation_skipped"] = "no context sentence answers the question"
            return trace, context, self._abstain(question, context, trace)
        return trace, context, None

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
            feedback = self.review(draft, result, context)
            attempts.append(attempt_record(draft, result, feedback))
            dropped.extend(result.dropped)
            trace.fields.update(attempts=tuple(attempts), citations_dropped=tuple(dropped),
                                prompt_version=draft.prompt_version,
                                retry_reason=attempts[0].problem if n else None)
            if feedback is None:
                break
        return draft, result, feedback is None

    def review(self, draft: Draft, result: GateResult, context: Context) -> RetryFeedback | None:
        """The generator's own review, then the judgement's: a kept sentence whose verified
        quotes do not answer the question, or that states another answer than its quotes,
        is refused like an uncited one."""
        feedback = review_refusals(result) or self.generator.review(draft, result)
        if feedback is None and not draft.abstain and context.judgement is not None:
            feedback = review_answers(result, context)
        return feedback

    def stream(
        self,
        question: str,
        *,
        top_k: int | None = None,
        tenant: str | None = None,
        category: str | None = None,
        request_id: str | None = None,
        client_request_id: str | None = None,
    ) -> Iterator[StreamEvent]:
        """The answer as events: meta, citations (each before text citing it), deltas, done.

        Runs the same stages as `answer()`. The extractive generator drafts the whole answer at
        once, so the gate runs first and the gated text is then released in pieces through
        `streaming.MarkerFilter`; a token-streaming generator feeds its tokens to that filter.
        A bad question raises `InvalidQuestion` here, before the first event.
        """
        question = self.validate_question(question)

        def events() -> Iterator[StreamEvent]:
            yield from answer_events(self.answer(
                question, top_k=top_k, tenant=tenant, category=category, request_id=request_id,
                client_request_id=client_request_id))

        def sentence_events() -> Iterator[StreamEvent]:
            for event in self._stream_sentences(question, top_k, tenant, category, request_id,
                                                client_request_id):
                if isinstance(event, DoneEvent):  # logged before a client can hang up on it
                    event = DoneEvent(answer=self._signed(event.answer))
                    self._log(question, event.answer)
                yield event

        return sentence_events() if self.generator.streams_sentences else events()

    def _stream_sentences(
        self,
        question: str,
        top_k: int | None,
        tenant: str | None,
        category: str | None,
        request_id: str | None,
        client_request_id: str | None,
    ) -> Iterator[StreamEvent]:
        """Stream a sentence-streaming generator: each sentence the model completes is gated
        and reviewed at once and, if it passes, released (citation events, then its text
        through the marker filter). Until a sentence was released, a refused attempt may be
        retried as in `answer()`; released text is never taken back, so afterwards the
        answer is what was released, and a refused sentence is simply left out."""
        trace, context, early = self._prepare(question, top_k, tenant, category, request_id,
                                              client_request_id)
        if early is not None:
            yield from answer_events(early)
            return
        yield MetaEvent(request_id=trace.request_id, snapshot_id=self.index.snapshot_id,
                        backend=self.index.backend, strategy=self.index.strategy,
                        generator=self.generator.name,
                        sources_consulted=sources_consulted(context))
        out = SentenceRelease()
        attempts: list[GenerationAttempt] = []
        dropped: list[DroppedCitation] = []
        feedback: RetryFeedback | None = None
        snapshot_id = self.index.snapshot_id
        try:
            with trace.stage("generate"):
                for _ in range(max(1, self.generator.max_attempts)):
                    draft = None
                    for item in self.generator.stream_draft(question, context, feedback):
                        if isinstance(item, Draft):  # the last item
                            draft = item
                            continue
                        one = Draft(sentences=(item,), generator=self.generator.name,
                                    prompt_version=self.generator.prompt_version)
                        result = gate(one, context, snapshot_id)
                        if result.sentences and self.review(one, result, context) is None:
                            yield from out.release(result)
                    if draft is None:
                        raise RuntimeError("the generator's stream ended without its draft")
                    whole = gate(draft, context, snapshot_id)
                    feedback = None if out.released else self.review(draft, whole, context)
                    if not out.released and feedback is None and not draft.abstain:
                        yield from out.release(whole)  # e.g. a JSON reply, judged whole
                    attempts.append(attempt_record(draft, whole, feedback))
                    dropped.extend(whole.dropped)
                    trace.fields.update(prompt_version=draft.prompt_version)
                    if feedback is None:
                        break
        except Exception as exc:  # a model fault costs the rest of the answer, never integrity
            trace.fields["fallback_used"] = True
            trace.degrade(f"generator: {type(exc).__name__}: {exc}")
        yield from out.close()
        retried = len(attempts) > 1 or (attempts and feedback is not None)  # retry may have failed
        trace.fields.update(attempts=tuple(attempts), citations_dropped=tuple(dropped),
                            retry_reason=attempts[0].problem if retried else None)
        if not out.released:
            answer = self._abstain(question, context, trace)
            yield from (e for e in answer_events(answer) if not isinstance(e, MetaEvent))
            return
        trace.fields["citations_emitted"] = len(out.citations)
        answer = self._grounded(out.result(tuple(dropped)), context, trace)
        yield DoneEvent(answer=answer.model_copy(update={"answer": out.text}))

    def retrieve(
        self, question: str, top_k: int | None, tenant: str | None, category: str | None
    ) -> list[RankedChunk]:
        """The fused top-k plus stand-ins for superseded sections (no reranking)."""
        return self._with_successors(self._search(question, top_k, tenant, category).ranked,
                                     tenant)

    def _search(
        self, question: str, top_k: int | None, tenant: str | None, category: str | None
    ) -> SearchResult:
        k = top_k or self.settings.top_k
        tenant = request_tenant(tenant)
        try:
            vector = self.embedder.embed_query(question)
            result = self.index.search_result(
                question, vector, k, tenant=tenant, category=category
            )
        except RetrievalError:
            raise
        except Exception as exc:  # any backend fault is a retrieval failure, never a crash
            raise RetrievalError(f"{type(exc).__name__}: {exc}") from exc
        return dataclasses.replace(result, ranked=_visible_only(result.ranked, tenant))

    def _with_successors(self, ranked: list[RankedChunk], tenant: str | None
                         ) -> list[RankedChunk]:
        try:
            ranked = add_successor_sections(ranked, self.index.chunks_of)
        except RetrievalError:
            raise
        except Exception as exc:
            raise RetrievalError(f"{type(exc).__name__}: {exc}") from exc
        # Stand-ins are looked up by document, not retrieved through the backend's filter.
        return _visible_only(ranked, request_tenant(tenant))

    def _abstain(
        self, question: str, context: Context, trace: _RequestTrace, reason: str | None = None
    ) -> Answer:
        return Answer(
            answer=abstention_text(question),
            grounded=False,
            abstained=True,
            missing=describe_missing(question),
            degraded=trace.fields.get("degraded", False),
            sources_consulted=sources_consulted(context),
            next_step=self.settings.next_step if reason is None else f"{reason} "
            f"{self.settings.next_step}",
            trace=trace.freeze(),
        )

    def _conflicted(
        self, question: str, conflict: Conflict, context: Context, trace: _RequestTrace
    ) -> Answer | None:
        """The answer to a question the sources disagree on (see `conflict_answer`), or None
        when the gate did not keep every side it needs: then the ordinary path answers."""
        with trace.stage("gate"):
            composed = compose_conflict_answer(question, conflict, context,
                                               self.index.snapshot_id)
        if composed is None:
            return None
        trace.fields.update(generator=composed.draft.generator,
                            prompt_version=composed.draft.prompt_version,
                            citations_emitted=len(composed.result.citations),
                            citations_dropped=composed.result.dropped)
        return Answer(
            answer=composed.text,
            citations=composed.result.citations,
            grounded=True,
            abstained=False,
            conflict=conflict,
            degraded=trace.fields.get("degraded", False),
            missing=composed.missing,
            sources_consulted=sources_consulted(context),
            next_step=composed.next_step,
            trace=trace.freeze(),
        )

    def _grounded(self, result: GateResult, context: Context, trace: _RequestTrace) -> Answer:
        return Answer(
            answer=result.render(),
            citations=result.citations,
            span=result.span,
            grounded=True,
            abstained=False,
            degraded=trace.fields.get("degraded", False),
            sources_consulted=sources_consulted(context),
            trace=trace.freeze(),
        )

    def _authorities(self, answer: Answer) -> dict[str, float]:
        """Authority of each cited chunk, for the request log (monitoring needs it)."""
        out: dict[str, float] = {}
        for c in answer.citations:
            try:
                chunk = self.index.get_chunk(c.chunk_id)
            except Exception:  # the record is best effort; the answer is already made
                chunk = None
            if chunk is not None:
                out[c.chunk_id] = chunk.authority
        return out


def _visible_only(ranked: list[RankedChunk], tenant: str | None) -> list[RankedChunk]:
    """Defence in depth behind the backends' own tenant filters: a chunk the request may not
    see never reaches the context, whatever a backend (or a stale index) returned."""
    kept = [r for r in ranked if visible(r.chunk.tenant, tenant)]
    if len(kept) < len(ranked):
        _log.error("dropped %d retrieved chunk(s) of a tenant the request did not name",
                   len(ranked) - len(kept))
    return kept
