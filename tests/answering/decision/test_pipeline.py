"""Every verdict reason is reached through a real engine (demo KB, hashing embedder)."""

from collections.abc import Callable, Iterator

import pytest

from citadel.answering.decision.verdict import REASONS, is_known
from citadel.answering.draft_review import review
from citadel.answering.generators.base import Generator
from citadel.answering.generators.extractive import ExtractiveGenerator
from citadel.answering.streaming import DoneEvent
from citadel.engine import Engine
from citadel.records import Answer, Context, Draft, DraftCitation, DraftSentence
from tests.test_engine import StubIndex, engine_with

ANSWERED = "How much does UK express delivery cost?"
QUOTE = "UK express delivery costs £9.95"  # a sentence of the demo's delivery page


class Scripted(Generator):
    """A generator that decides, writing what `write` returns (or raising it)."""

    name = "scripted"
    prompt_version = "scripted-v1"
    decides = True

    def __init__(self, write: Callable[[Context], Draft], *, streams: bool = False,
                 attempts: int = 1, reviews: bool = True) -> None:
        self.write = write
        self.reviews = reviews
        self.streams_sentences = streams
        self.max_attempts = attempts

    def generate(self, question, context, feedback=None):
        return self.write(context)

    def review(self, draft, result):  # as the language-model generators review
        return review(draft, result, support_threshold=0.5) if self.reviews else None

    def stream_draft(self, question, context, feedback=None) -> Iterator:
        draft = self.write(context)
        yield from draft.sentences
        yield draft


def _label_of(context: Context, quote: str) -> str:
    return next(b.label for b in context.blocks if quote in b.chunk.content)


def draft(*sentences: DraftSentence, abstain: bool = False) -> Draft:
    return Draft(sentences=sentences, abstain=abstain, generator="scripted",
                 prompt_version="scripted-v1")


def cited(text: str, quote: str = QUOTE) -> Callable[[Context], Draft]:
    return lambda ctx: draft(DraftSentence(text=text, citations=(
        DraftCitation(label=_label_of(ctx, quote), quote=quote),)))


def raises(ctx: Context) -> Draft:
    raise RuntimeError("model server gone")


@pytest.fixture(scope="module")
def engine_for(hashing_engine: Engine) -> Callable[[Generator], Engine]:
    def make(generator: Generator) -> Engine:
        return Engine(hashing_engine.settings, hashing_engine.index, hashing_engine.embedder,
                      generator, judge=hashing_engine.judge)
    return make


def streamed(engine: Engine, question: str) -> Answer:
    return next(e.answer for e in engine.stream(question) if isinstance(e, DoneEvent))


def test_every_reason_on_the_list_is_known_and_unknown_ones_are_not():
    assert all(is_known(code) for code in REASONS if code not in ("review_refused", "conflict"))
    assert is_known("review_refused:uncited_sentence") and is_known("conflict:values")
    assert not is_known("review_refused:made_up") and not is_known("conflict")
    assert not is_known("no_evidence")


def test_retrieval_failed(tmp_path):
    from citadel.retrieval.backends.base import RetrievalError
    v = engine_with(StubIndex(RetrievalError("down")), tmp_path).answer(ANSWERED).verdict
    assert (v.outcome, v.stage, v.reason) == ("abstained", "retrieval", "retrieval_failed")


def test_no_sources(tmp_path):
    answer = engine_with(StubIndex(), tmp_path).answer(ANSWERED)
    v = answer.verdict
    assert (v.outcome, v.stage, v.reason) == ("abstained", "context", "no_sources")
    assert answer.trace.verdict == v


def test_nothing_answers_reports_the_best_score_and_the_threshold(hashing_engine):
    v = hashing_engine.answer("Who painted the ceiling of the old chapel?").verdict
    assert (v.outcome, v.stage, v.reason) == ("abstained", "relevance", "nothing_answers")
    assert v.scores["best_score"] < v.thresholds["threshold"]


def test_below_floor_asks_no_model(engine_for):
    answer = engine_for(Scripted(raises)).answer("How many moons orbit the largest planet?")
    assert answer.verdict.reason == "below_floor"
    assert answer.trace.generation_skipped and not answer.trace.attempts


@pytest.mark.parametrize("stream", [False, True], ids=["answer", "stream"])
def test_generator_error(engine_for, stream):
    engine = engine_for(Scripted(raises, streams=stream))
    answer = streamed(engine, ANSWERED) if stream else engine.answer(ANSWERED)
    assert answer.verdict.reason == "generator_error" and answer.degraded


@pytest.mark.parametrize("stream", [False, True], ids=["answer", "stream"])
def test_draft_abstained(engine_for, stream):
    engine = engine_for(Scripted(lambda ctx: draft(abstain=True), streams=stream))
    answer = streamed(engine, ANSWERED) if stream else engine.answer(ANSWERED)
    assert answer.abstained and answer.verdict.reason == "draft_abstained"


@pytest.mark.parametrize("stream", [False, True], ids=["answer", "stream"])
def test_review_refused_names_the_first_refusal_code(engine_for, stream):
    uncited = lambda ctx: draft(DraftSentence(text="Express delivery costs £9.95."))  # noqa: E731
    engine = engine_for(Scripted(uncited, streams=stream, attempts=2))
    answer = streamed(engine, ANSWERED) if stream else engine.answer(ANSWERED)
    assert answer.abstained
    assert answer.verdict.reason == "review_refused:uncited_sentence"
    assert answer.verdict.scores["attempts"] == 2
    # One retry rule for both paths: the first attempt's problem, once a retry was made.
    assert answer.trace.retry_reason == "uncited_sentence"


def test_gate_kept_nothing(engine_for):
    # A generator without a review of its own, whose every citation the gate drops.
    def made_up(ctx: Context) -> Draft:
        return draft(DraftSentence(text="Express costs £1.", citations=(DraftCitation(
            label=ctx.blocks[0].label, quote="Express delivery is free on Sundays"),)))
    answer = engine_for(Scripted(made_up, reviews=False)).answer(ANSWERED)
    assert answer.verdict.reason == "gate_kept_nothing"


@pytest.mark.parametrize("stream", [False, True], ids=["answer", "stream"])
def test_answered(engine_for, stream):
    engine = engine_for(Scripted(cited("UK express delivery costs £9.95."), streams=stream))
    answer = streamed(engine, ANSWERED) if stream else engine.answer(ANSWERED)
    assert answer.grounded and answer.verdict.outcome == "answered"
    assert answer.verdict.reason == "answered"
    assert answer.verdict.stage == ("release" if stream else "attempts")


def test_extractive_answer_states_its_scores(engine_for):
    v = engine_for(ExtractiveGenerator()).answer(ANSWERED).verdict
    assert v.reason == "answered" and v.scores["best_score"] >= v.thresholds["threshold"]


def test_a_conflict_names_its_detector(hashing_engine):
    # The holiday page's 31 January 2027 against the help page's 15 January 2027.
    answer = hashing_engine.answer("Until when can I return Christmas gifts?")
    assert answer.conflict is not None
    v = answer.verdict
    assert v.outcome == "conflict" and v.stage == "conflicts"
    assert v.reason.startswith("conflict:") and is_known(v.reason)


@pytest.mark.parametrize("stream", [False, True], ids=["answer", "stream"])
def test_a_model_answer_another_source_contradicts_is_a_kept_conflict(tmp_path, stream,
                                                                     monkeypatch):
    from citadel.answering.decision import DecisionRequest, decide, decide_streaming
    from citadel.answering.request_trace import RequestTrace
    from tests.answering.test_reader_conflicts import LEEDS, ROTTERDAM, _returns
    from tests.conftest import hashing_settings

    # No detector before generation sees it (the values one would: switched off here; the
    # reader's rule would not: the policy sentence is below its cut-off). The model vouches
    # for that sentence by citing it.
    monkeypatch.setattr("citadel.answering.decision.conflicts.DETECTORS", ())
    judgement, ctx = _returns(LEEDS, "Leeds", ROTTERDAM, "Rotterdam")
    low = judgement.sentences[0].model_copy(update={"reader": 0.1})
    judgement = judgement.model_copy(update={"sentences": (low, judgement.sentences[1])})
    ctx = ctx.model_copy(update={"judgement": judgement})
    generator = Scripted(cited("Returns go to Leeds.", quote=LEEDS), streams=stream)
    req = DecisionRequest("Where do I send returns?", ctx, RequestTrace("r1"), generator,
                          "snap", hashing_settings(tmp_path))
    if stream:
        answer = next(e.answer for e in decide_streaming(req) if isinstance(e, DoneEvent))
    else:
        answer = decide(req)
    assert answer.conflict is not None
    assert (answer.verdict.reason, answer.verdict.stage) == ("conflict:kept", "conflicts_after")
    assert "Rotterdam" in answer.answer and "Leeds" in answer.answer


@pytest.mark.parametrize("stream", [False, True], ids=["answer", "stream"])
def test_a_name_no_source_mentions_is_not_answered_even_by_a_model(engine_for, stream):
    # The model would answer from the delivery page; the question asks about a product no
    # source mentions, so no model is asked and the abstention names it.
    engine = engine_for(Scripted(cited("UK express delivery costs £9.95."), streams=stream))
    question = "How much does express delivery cost for the Zephyr Pro kettle?"
    answer = streamed(engine, question) if stream else engine.answer(question)
    v = answer.verdict
    assert (v.outcome, v.stage, v.reason) == ("abstained", "names", "not_mentioned")
    assert answer.missing == "anything about Zephyr Pro" and not answer.citations
    assert answer.answer == "I couldn't find anything about Zephyr Pro in the knowledge base."
    assert not answer.trace.attempts
