"""Conflicts: do sources of equal standing disagree on what was asked?

Each detector is one way of finding a disagreement, behind one small interface (`name`,
`detect`). `DETECTORS` runs before generation, in this order: the first whose conflict the
gate can compose into an answer decides (`composing`); one found but not composable is kept
for the verdict and the next detector runs. `KEPT` runs after the gate, on a language
model's kept answer (the extractive answer quotes sentences the detectors already read).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from citadel.answering.conflicts import check_conflicts
from citadel.answering.decision.request import DecisionRequest
from citadel.answering.reader_conflicts import answers, kept_conflict, reader_conflict
from citadel.answering.span_conflicts import span_conflict
from citadel.gate import GateResult
from citadel.records import Conflict, ConflictSide, Context, Judgement, SentenceJudgement
from citadel.text.quotes import normalize


@dataclass(frozen=True)
class Detector:
    """One way of finding a disagreement in a request's context."""

    name: str
    find: Callable[[str, Context, float], Conflict | None]

    def detect(self, question: str, context: Context, authority_gap: float
               ) -> Conflict | None:
        return self.find(question, context, authority_gap)


def _values(question: str, context: Context, gap: float) -> Conflict | None:
    """The values the question asks for (dates, money, durations, places), by attribute."""
    return check_conflicts(question, context, authority_gap=gap)


def _spans(question: str, context: Context, gap: float) -> Conflict | None:
    """Two judged sentences stating one statement with a different answer span."""
    if context.judgement is None:
        return None
    return span_conflict(context.judgement, context, authority_gap=gap)


def _reader(question: str, context: Context, gap: float) -> Conflict | None:
    """Two sentences the reader finds answering, with answers that differ."""
    if context.judgement is None:
        return None
    return reader_conflict(context.judgement, context, authority_gap=gap)


DETECTORS: tuple[Detector, ...] = (
    Detector("values", _values),
    Detector("spans", _spans),
    Detector("reader", _reader),
)


def detected(req: DecisionRequest) -> Iterator[tuple[str, Conflict]]:
    """Each detector's conflict, in order, as it is found (a later detector runs only when
    the caller asks for more: when the earlier conflict could not be composed). A conflict
    whose sides do not all answer the question is no conflict (`on_the_question`)."""
    for detector in DETECTORS:
        with req.trace.stage("conflicts"):
            conflict = detector.detect(req.question, req.context, req.authority_gap)
        if conflict is not None and on_the_question(conflict, req.context.judgement):
            yield detector.name, conflict


def _squash(text: str) -> str:
    return " ".join(normalize(text).split())


def side_sentence(side: ConflictSide, judgement: Judgement) -> SentenceJudgement | None:
    """The judged sentence that states a side (its quote, in its chunk)."""
    quote = _squash(side.quote)
    return next((s for s in judgement.sentences if s.chunk_id == side.chunk_id and quote
                 and (quote in _squash(s.text) or _squash(s.text) in quote)), None)


def on_the_question(conflict: Conflict, judgement: Judgement | None) -> bool:
    """Two values conflict only when both answer what was asked: every side's sentence is
    judged answering, or read so by the reader (`reader_conflicts.answers`). A delivery
    price and a product price, a hold period and what to bring, never meet."""
    if judgement is None:
        return True  # nothing judged the context (a caller outside the engine)
    for side in conflict.sides:
        sentence = side_sentence(side, judgement)
        if sentence is None or not answers(sentence):
            return False
    return True


def kept(req: DecisionRequest, result: GateResult) -> Conflict | None:
    """A model's kept answer against another document's answering sentence (`KEPT`)."""
    judgement = req.context.judgement
    if judgement is None or not req.generator.decides:
        return None
    with req.trace.stage("conflicts_after"):
        return kept_conflict(result, judgement, req.context, authority_gap=req.authority_gap)


KEPT = "kept"
