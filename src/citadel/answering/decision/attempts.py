"""Attempts: generate, gate, review, and retry with the problems named.

One loop for `answer()` and the stream alike (`Attempts`): iterating it gives the feedback
each attempt generates with (None first), until an attempt is accepted or the generator's
`max_attempts` run out; `record` takes each attempt's draft, gate result and review. The
retry rule and the trace fields (`attempts`, `citations_dropped`, `retry_reason`: the first
attempt's problem, once a retry was made) live here alone. `verdict` says how it ended.
"""

from __future__ import annotations

from collections.abc import Iterator

from citadel.answering.decision.relevance import figures
from citadel.answering.decision.request import DecisionRequest
from citadel.answering.decision.review import review
from citadel.answering.decision.verdict import verdict
from citadel.answering.draft_review import attempt_record
from citadel.gate import GateResult, gate
from citadel.records import (
    Draft,
    DroppedCitation,
    GenerationAttempt,
    RetryFeedback,
    Verdict,
)


class Attempts:
    def __init__(self, req: DecisionRequest) -> None:
        self.req = req
        self.records: list[GenerationAttempt] = []
        self.dropped: list[DroppedCitation] = []
        self.draft: Draft | None = None
        self.result: GateResult | None = None
        self.feedback: RetryFeedback | None = None
        self.error: str | None = None

    def __iter__(self) -> Iterator[tuple[int, RetryFeedback | None]]:
        for n in range(max(1, self.req.generator.max_attempts)):
            yield n, self.feedback
            if self.feedback is None or self.error is not None:
                return

    def record(self, draft: Draft, result: GateResult, feedback: RetryFeedback | None) -> None:
        self.draft, self.result, self.feedback = draft, result, feedback
        self.records.append(attempt_record(draft, result, feedback))
        self.dropped.extend(result.dropped)
        retried = len(self.records) > 1
        self.req.trace.fields.update(
            attempts=tuple(self.records), citations_dropped=tuple(self.dropped),
            prompt_version=draft.prompt_version,
            retry_reason=self.records[0].problem if retried else None)

    def failed(self, exc: Exception) -> None:
        """A generator fault costs the answer (or the rest of it), never integrity."""
        self.error = f"{type(exc).__name__}: {exc}"
        self.req.trace.fields["fallback_used"] = True
        self.req.trace.degrade(f"generator: {self.error}")

    @property
    def accepted(self) -> bool:
        return (self.error is None and self.draft is not None and self.feedback is None
                and not self.draft.abstain and self.result is not None
                and bool(self.result.sentences))

    def verdict(self) -> Verdict:
        """How the attempts ended: answered, or the reason none may be shown."""
        judgement = self.req.context.judgement
        scores, thresholds = figures(judgement) if judgement is not None else ({}, {})
        scores["attempts"] = float(len(self.records))
        if self.error is not None:
            reason = "generator_error"
        elif self.feedback is not None:
            reason = f"review_refused:{self.feedback.reasons[0]}"
        elif self.draft is None or self.draft.abstain:
            reason = "draft_abstained"
        elif self.result is None or not self.result.sentences:
            reason = "gate_kept_nothing"
        else:
            reason = "answered"
        return verdict(reason, scores=scores, thresholds=thresholds)


def generate(req: DecisionRequest) -> Attempts:
    """Draft whole answers, gating and reviewing each, retrying while refused."""
    attempts = Attempts(req)
    generator, trace = req.generator, req.trace
    try:
        for n, feedback in attempts:
            suffix = "" if n == 0 else f"_retry{n}"
            with trace.stage("generate" + suffix):
                draft = (generator.generate(req.question, req.context) if feedback is None
                         else generator.generate(req.question, req.context, feedback))
            with trace.stage("gate" + suffix):
                result = gate(draft, req.context, req.snapshot_id)
            attempts.record(draft, result, review(req, draft, result))
    except Exception as exc:  # noqa: BLE001 - any generator fault becomes an abstention
        attempts.failed(exc)
    return attempts
