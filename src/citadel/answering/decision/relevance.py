"""Relevance: does any sentence of the context answer, before a generator is asked?

The judgement (`answering.judgement`) scored every context sentence. The extractive
generator quotes only answering sentences, so without one (`threshold`) the answer is an
abstention. A language model decides by itself whether the context answers; it is not asked
only when every sentence is below the `floor` (the context is certainly irrelevant).
"""

from __future__ import annotations

from citadel.answering.decision.request import DecisionRequest
from citadel.answering.decision.verdict import verdict
from citadel.records import Judgement, Verdict


def figures(judgement: Judgement) -> tuple[dict[str, float], dict[str, float]]:
    """The best sentence's scores, and the thresholds they are compared with."""
    best = judgement.sentences[0] if judgement.sentences else None
    scores = {} if best is None else {"best_score": round(best.score, 4)}
    if best is not None and best.reader is not None:
        scores["best_reader"] = round(best.reader, 4)
    thresholds = {"threshold": round(judgement.threshold, 4), "floor": round(judgement.floor, 4)}
    return scores, thresholds


def relevance(req: DecisionRequest) -> Verdict | None:
    """An abstention's verdict when nothing in the context answers, else None."""
    judgement = req.context.judgement
    if judgement is None:
        return None
    scores, thresholds = figures(judgement)
    if req.generator.decides and not judgement.relevant:
        req.trace.fields["generation_skipped"] = "the context is certainly irrelevant"
        return verdict("below_floor", scores=scores, thresholds=thresholds)
    if not req.generator.decides and not judgement.answerable:
        req.trace.fields["generation_skipped"] = "no context sentence answers the question"
        return verdict("nothing_answers", scores=scores, thresholds=thresholds)
    return None
