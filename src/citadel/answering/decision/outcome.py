"""Outcome: the `Answer` for each decision, with its verdict.

The only place an engine answer is built. Each builder records the verdict in the trace
before freezing it, so the trace, the answer, the request log and the receipt agree.
"""

from __future__ import annotations

from collections.abc import Sequence

from citadel.answering.decision.composing import ConflictAnswer
from citadel.answering.decision.request import DecisionRequest
from citadel.answering.decision.verdict import amended
from citadel.answering.fallbacks import (
    NO_SOURCES,
    RETRIEVAL_FAILED,
    RETRIEVAL_NEXT_STEP,
    abstention_text,
    describe_missing,
    sources_consulted,
    unmentioned_missing,
)
from citadel.answering.request_trace import RequestTrace
from citadel.gate import GateResult
from citadel.records import Answer, Conflict, Trace, Verdict


def _with_conflicts_seen(req: DecisionRequest, v: Verdict) -> Verdict:
    if not req.not_composed:
        return v
    return amended(v, conflicts_not_composed=tuple(req.not_composed))


def _frozen(trace: RequestTrace, v: Verdict) -> Trace:
    trace.fields["verdict"] = v
    return trace.freeze()


def retrieval_failed(question: str, trace: RequestTrace, v: Verdict) -> Answer:
    """The knowledge base could not be searched: no context, an honest failure."""
    return Answer(answer=RETRIEVAL_FAILED, grounded=False, abstained=True, degraded=True,
                  missing=describe_missing(question), next_step=RETRIEVAL_NEXT_STEP,
                  verdict=v, trace=_frozen(trace, v))


def abstained(req: DecisionRequest, v: Verdict, not_mentioned: Sequence[str] = ()) -> Answer:
    """An abstention; `not_mentioned` names what the question asked about that no source
    mentions (the abstention says so instead of restating the question)."""
    v = _with_conflicts_seen(req, v)
    next_step = req.settings.next_step
    if v.reason == "no_sources":
        next_step = f"{NO_SOURCES} {next_step}"
    missing = (unmentioned_missing(not_mentioned) if not_mentioned
               else describe_missing(req.question))
    return Answer(
        answer=abstention_text(req.question, missing),
        grounded=False,
        abstained=True,
        missing=missing,
        degraded=req.trace.degraded,
        sources_consulted=sources_consulted(req.context),
        next_step=next_step,
        verdict=v,
        trace=_frozen(req.trace, v),
    )


def conflicted(req: DecisionRequest, conflict: Conflict, composed: ConflictAnswer,
               v: Verdict) -> Answer:
    v = _with_conflicts_seen(req, v)
    req.trace.fields.update(generator=composed.draft.generator,
                            prompt_version=composed.draft.prompt_version,
                            citations_emitted=len(composed.result.citations),
                            citations_dropped=composed.result.dropped)
    return Answer(
        answer=composed.text,
        citations=composed.result.citations,
        grounded=True,
        abstained=False,
        conflict=conflict,
        degraded=req.trace.degraded,
        missing=composed.missing,
        sources_consulted=sources_consulted(req.context),
        next_step=composed.next_step,
        verdict=v,
        trace=_frozen(req.trace, v),
    )


def grounded(req: DecisionRequest, result: GateResult, v: Verdict) -> Answer:
    v = _with_conflicts_seen(req, v)
    req.trace.fields["citations_emitted"] = len(result.citations)
    return Answer(
        answer=result.render(),
        citations=result.citations,
        span=result.span,
        grounded=True,
        abstained=False,
        degraded=req.trace.degraded,
        sources_consulted=sources_consulted(req.context),
        verdict=v,
        trace=_frozen(req.trace, v),
    )
