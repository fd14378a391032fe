"""Review: may a gated draft be shown? The generator's own review, then the judgement's.

A kept sentence saying the sources do not answer is refused whatever wrote it; then the
generator reviews its draft (support of each sentence by its quotes); then the judgement: a
kept sentence whose verified quotes do not answer the question, or that states another
answer than its quotes, is refused like an uncited one (`answering.draft_review`).
"""

from __future__ import annotations

from citadel.answering.decision.request import DecisionRequest
from citadel.answering.draft_review import review_answers, review_refusals
from citadel.gate import GateResult
from citadel.records import Draft, RetryFeedback


def review(req: DecisionRequest, draft: Draft, result: GateResult) -> RetryFeedback | None:
    """None if the gated draft may be shown (or is an honest abstention), else why not."""
    feedback = review_refusals(result) or req.generator.review(draft, result)
    if feedback is None and not draft.abstain and req.context.judgement is not None:
        feedback = review_answers(result, req.context)
    return feedback
