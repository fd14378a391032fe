"""The Engine wires the stages in order and owns each request's trace.

A request reads its evidence (`answering.evidence`), the decision decides (`answering.decision`:
every way to answer, abstain or state a conflict, in order, each with its verdict), then the
answer is signed and logged. Request-scoped values are locals: the engine holds only read-only
collaborators, so concurrent requests cannot see each other's state.
"""

from __future__ import annotations

import functools
import hashlib
import uuid
from collections.abc import Callable, Iterator, Sequence

from citadel.answering.decision import DecisionRequest, decide, decide_streaming, outcome
from citadel.answering.decision.verdict import verdict
from citadel.answering.evidence import Evidence
from citadel.answering.follow_up import MAX_ANSWER_CHARS, MAX_TURNS, asked_about, standalone
from citadel.answering.generators import Generator, get_generator
from citadel.answering.judgement import Judge
from citadel.answering.request_trace import RequestTrace
from citadel.answering.streaming import DoneEvent, StreamEvent, answer_events
from citadel.config import Settings
from citadel.knowledge.readiness import readiness
from citadel.knowledge.receipts import Signer
from citadel.knowledge.signing import KeyStore
from citadel.observability.request_log import RequestLog
from citadel.records import Answer, RankedChunk, Standalone, Turn
from citadel.retrieval.backends import Backend, RetrievalError, SearchIndex, get_backend
from citadel.retrieval.backends.readiness import alias_mismatch
from citadel.retrieval.embedders import Embedder, get_embedder
from citadel.retrieval.rerankers import Reranker, get_reranker
from citadel.retrieval.tenancy import request_tenant


class NotReady(RuntimeError):
    """The engine cannot serve: no active snapshot, or one that does not fit the config."""


class InvalidQuestion(ValueError):
    """The question cannot be answered as given (empty, too long)."""


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
        self.evidence = Evidence(settings, index, embedder, reranker, self.judge)
        # A conversation's earlier questions are parsed again on each turn: parse each once.
        self.parse = functools.lru_cache(maxsize=512)(self.judge.analyser.parse)
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
        """Open the active snapshot, refusing one that is incomplete or incompatible; the
        reranker, the request log and the judge come from the settings unless given."""
        settings = settings or Settings.load()
        embedder = embedder or get_embedder(settings.embedder)
        index = _open_active(settings, embedder, backend)
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

    def validate_history(self, history: Sequence[Turn]) -> tuple[Turn, ...]:
        """Earlier turns, oldest first: at most MAX_TURNS, each question within the question
        limit and each answer within MAX_ANSWER_CHARS (answers are never read; bounded all
        the same)."""
        if len(history) > MAX_TURNS:
            raise InvalidQuestion(f"the history has {len(history)} turns; the limit is "
                                  f"{MAX_TURNS} (send the most recent ones)")
        turns = []
        for n, turn in enumerate(history, start=1):
            try:
                question = self.validate_question(turn.question)
            except InvalidQuestion as exc:
                raise InvalidQuestion(f"history turn {n}: {exc}") from None
            if turn.answer is not None and len(turn.answer) > MAX_ANSWER_CHARS:
                raise InvalidQuestion(f"history turn {n}: the answer is {len(turn.answer)} "
                                      f"characters long; the limit is {MAX_ANSWER_CHARS}")
            turns.append(Turn(question=question, answer=turn.answer))
        return tuple(turns)

    def answer(
        self,
        question: str,
        *,
        history: Sequence[Turn] = (),
        top_k: int | None = None,
        tenant: str | None = None,
        category: str | None = None,
        request_id: str | None = None,
        client_request_id: str | None = None,
    ) -> Answer:
        question = self.validate_question(question)
        earlier = self.validate_history(history)
        trace = self._trace(question, request_id, client_request_id)
        asked = self._standalone(question, earlier, trace)
        req = self._request(question, asked, top_k, tenant, category, trace)
        answer = self._signed(_with_standalone(req if isinstance(req, Answer) else decide(req)))
        self._log(question, answer, tenant)
        return answer

    def stream(
        self,
        question: str,
        *,
        history: Sequence[Turn] = (),
        top_k: int | None = None,
        tenant: str | None = None,
        category: str | None = None,
        request_id: str | None = None,
        client_request_id: str | None = None,
    ) -> Iterator[StreamEvent]:
        """The answer as events: meta, citations (each before text citing it), deltas, done.

        The same stages as `answer()`; a whole answer is released in pieces, a token-streaming
        generator's sentence by sentence (`decision.release`). A bad question raises
        `InvalidQuestion` here, before the first event (and so does a history beyond its
        bounds)."""
        question = self.validate_question(question)
        earlier = self.validate_history(history)
        if not self.generator.streams_sentences:
            def whole() -> Iterator[StreamEvent]:
                yield from answer_events(self.answer(
                    question, history=earlier, top_k=top_k, tenant=tenant,
                    category=category, request_id=request_id,
                    client_request_id=client_request_id))
            return whole()

        def sentences() -> Iterator[StreamEvent]:
            trace = self._trace(question, request_id, client_request_id)
            asked = self._standalone(question, earlier, trace)
            req = self._request(question, asked, top_k, tenant, category, trace)
            events = (answer_events(req) if isinstance(req, Answer)
                      else decide_streaming(req))
            for event in events:
                if isinstance(event, DoneEvent):  # logged before a client can hang up on it
                    event = DoneEvent(answer=self._signed(_with_standalone(event.answer)))
                    self._log(question, event.answer, tenant)
                yield event
        return sentences()

    def _trace(self, question: str, request_id: str | None,
               client_request_id: str | None) -> RequestTrace:
        trace = RequestTrace(request_id or uuid.uuid4().hex)
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
        return trace

    def _standalone(self, question: str, earlier: tuple[Turn, ...],
                    trace: RequestTrace) -> Standalone | None:
        """The question this turn asks, standing alone (`answering.follow_up`), from the
        earlier USER questions only, never an answer's text; recorded in the trace. None
        without earlier turns."""
        if not earlier:
            return None
        with trace.stage("follow_up"):
            asked = standalone(question, [t.question for t in earlier], self.parse,
                               model=self.generator.complete,
                               max_chars=self.settings.max_question_chars)
        trace.fields["standalone"] = asked
        return asked

    def _request(self, question: str, asked: Standalone | None, top_k: int | None,
                 tenant: str | None, category: str | None, trace: RequestTrace
                 ) -> DecisionRequest | Answer:
        """The judged context for the decision, or the answer when the knowledge base could
        not be searched. A follow-up is answered as its standalone question (`asked`)."""
        about = asked_about(question, self.parse) if asked and asked.how != "kept" else ()
        question = asked.question if asked is not None else question
        try:
            ranked = self.evidence.retrieve(question, top_k, tenant, category, trace)
        except RetrievalError as exc:
            trace.fields.update(retrieval_ok=False, fallback_used=True)
            trace.degrade(f"retrieval: {exc}")
            return outcome.retrieval_failed(question, trace, verdict("retrieval_failed"))
        context = self.evidence.context(question, ranked, trace, self.generator.decides)
        return DecisionRequest(question, context, trace, self.generator,
                               self.index.snapshot_id, self.settings, asked_about=about)

    def retrieve(
        self, question: str, top_k: int | None, tenant: str | None, category: str | None
    ) -> list[RankedChunk]:
        """The fused top-k plus stand-ins for superseded sections (no reranking)."""
        found = self.evidence.search(question, top_k, tenant, category)
        return self.evidence.with_successors(found.ranked, tenant)

    def _signed(self, answer: Answer) -> Answer:
        return self.signer(answer) if self.signer is not None else answer

    def _log(self, question: str, answer: Answer, tenant: str | None) -> None:
        if self.request_log is not None:  # with its tenant: verify compares only within one
            self.request_log.log_answer(question, answer, self._authorities(answer),
                                        log_question=self.settings.log_questions,
                                        tenant=request_tenant(tenant))

    def _authorities(self, answer: Answer) -> dict[str, float]:
        """Authority of each cited chunk, for the request log (monitoring needs it)."""
        out: dict[str, float] = {}
        for c in answer.citations:
            try:
                chunk = self.index.get_chunk(c.chunk_id)
            except Exception:  # the record is best effort; the answer is already made
                continue
            if chunk is not None:
                out[c.chunk_id] = chunk.authority
        return out


def _with_standalone(answer: Answer) -> Answer:
    """The answer showing the question it answered, when a follow-up was made to stand alone
    (its trace holds it)."""
    if answer.trace.standalone is None:
        return answer
    return answer.model_copy(update={"standalone": answer.trace.standalone})


def _open_active(settings: Settings, embedder: Embedder, backend: Backend | None
                 ) -> SearchIndex:
    """The index of the active snapshot, or NotReady saying why it cannot be served."""
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
    return index
