"""The decision, top to bottom: answer, abstain, or say the sources disagree.

Every stage reads one request's judged context (`DecisionRequest`) and either decides (it
returns the `Answer`, with its verdict) or passes (None). In order:

    sources          no context at all                          -> abstained: no_sources
    names            the question names what no source mentions -> abstained: not_mentioned
    conflicts        DETECTORS in order; the first composed     -> conflict:<detector>
    relevance        nothing answers / below the floor          -> abstained: nothing_answers,
                                                                   below_floor
    attempts         generate -> gate -> review -> retry        -> abstained: generator_error,
                                                                   draft_abstained,
                                                                   review_refused:<code>,
                                                                   gate_kept_nothing
    conflicts_after  a model's kept answer vs another source    -> conflict:kept
    outcome          the grounded answer                        -> answered

Retrieval (`retrieval_failed`) decides before any of these, in the engine. A streamed answer
runs the same stages; its attempts release sentence by sentence (`release.Release`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from citadel.answering.decision import outcome
from citadel.answering.decision.attempts import generate
from citadel.answering.decision.composing import compose
from citadel.answering.decision.conflicts import KEPT, detected, kept
from citadel.answering.decision.names import unmentioned
from citadel.answering.decision.release import Release
from citadel.answering.decision.relevance import relevance
from citadel.answering.decision.request import DecisionRequest
from citadel.answering.decision.verdict import verdict
from citadel.answering.fallbacks import sources_consulted
from citadel.answering.streaming import DoneEvent, MetaEvent, StreamEvent, answer_events
from citadel.records import Answer, Conflict


def sources(req: DecisionRequest) -> Answer | None:
    if req.context.blocks:
        return None
    req.trace.fields["fallback_used"] = True
    return outcome.abstained(req, verdict("no_sources"))


def names(req: DecisionRequest) -> Answer | None:
    judgement = req.context.judgement
    missing = unmentioned(judgement.question.names, req.context) if judgement else []
    if not missing:
        return None
    return outcome.abstained(req, verdict("not_mentioned"), not_mentioned=missing)


def _composed(req: DecisionRequest, detector: str, conflict: Conflict,
              stage: str) -> Answer | None:
    """The conflict's answer, or None (recorded) when the gate did not keep every side it
    needs: then the next stage decides."""
    with req.trace.stage("gate"):
        composed = compose(req.question, conflict, req.context, req.snapshot_id)
    if composed is None:
        req.not_composed.append(conflict)
        return None
    decided = "conflict" if conflict.resolution == "flagged" else "answered"
    return outcome.conflicted(req, conflict, composed, verdict(
        f"conflict:{detector}", stage=stage, outcome=decided,
        thresholds={"authority_gap": req.authority_gap}))


def conflicts(req: DecisionRequest) -> Answer | None:
    for detector, conflict in detected(req):
        answer = _composed(req, detector, conflict, "conflicts")
        if answer is not None:
            return answer
    return None


def relevant(req: DecisionRequest) -> Answer | None:
    decided = relevance(req)
    return None if decided is None else outcome.abstained(req, decided)


BEFORE_GENERATION: tuple[Callable[[DecisionRequest], Answer | None], ...] = (
    sources, names, conflicts, relevant)


def _before_generation(req: DecisionRequest) -> Answer | None:
    for stage in BEFORE_GENERATION:
        answer = stage(req)
        if answer is not None:
            return answer
    return None


def decide(req: DecisionRequest) -> Answer:
    """The whole decision for `answer()`."""
    early = _before_generation(req)
    if early is not None:
        return early
    attempts = generate(req)
    if not attempts.accepted or attempts.result is None:
        return outcome.abstained(req, attempts.verdict())
    found = kept(req, attempts.result)
    if found is not None:
        answer = _composed(req, KEPT, found, "conflicts_after")
        if answer is not None:
            return answer
    return outcome.grounded(req, attempts.result, attempts.verdict())


def decide_streaming(req: DecisionRequest) -> Iterator[StreamEvent]:
    """The whole decision as events, for a sentence-streaming generator: meta, citations
    (each before the text citing it), deltas, done."""
    early = _before_generation(req)
    if early is not None:
        yield from answer_events(early)
        return
    trace = req.trace
    yield MetaEvent(request_id=trace.request_id, snapshot_id=req.snapshot_id,
                    backend=trace.fields.get("backend", ""),
                    strategy=trace.fields.get("strategy", ""),
                    generator=req.generator.name, sources_consulted=sources_consulted(req.context))
    release = Release(req)
    yield from release.events()
    answer = release.answer()
    if answer.abstained:  # nothing was released: the abstention's own text and citations
        yield from (e for e in answer_events(answer) if not isinstance(e, MetaEvent))
        return
    yield DoneEvent(answer=answer)
