"""The verdict: why an answer is what it is, from a closed list of reasons.

Every answer the engine gives carries one (`Answer.verdict`, also in its trace, the request
log, every door and the signed receipt). A reason is one code of `REASONS`, or a family code
with its detail after a colon: `review_refused:<code>` names the review's first refusal code
(`REVIEW_CODES`), `conflict:<detector>` the detector that found the disagreement
(`decision.conflicts.DETECTORS`, plus `kept` for the check on a model's kept answer).
`explain` says a verdict in words, for `citadel ask --why` and the page's "Why?".
"""

from __future__ import annotations

from collections.abc import Mapping

from citadel.records import Conflict, Verdict

# code -> (stage that decides it, what it means in words)
REASONS: dict[str, tuple[str, str]] = {
    "retrieval_failed": ("retrieval", "the knowledge base could not be searched"),
    "no_sources": ("context", "no document of the knowledge base matched the question"),
    "not_mentioned": ("names", "the question names something no source retrieved mentions"),
    "below_floor": ("relevance", "no sentence of the sources retrieved is even close to the "
                                 "question, so no language model was asked"),
    "nothing_answers": ("relevance", "no sentence of the sources retrieved answers the "
                                     "question"),
    "generator_error": ("attempts", "the answer generator failed"),
    "draft_abstained": ("attempts", "the generator found no answer in the sources"),
    "review_refused": ("attempts", "the generated answer was refused"),
    "gate_kept_nothing": ("attempts", "no sentence of the generated answer kept a verified "
                                      "citation"),
    "conflict": ("conflicts", "sources of equal standing disagree"),
    "answered": ("attempts", "sentences of the sources answer the question, and every "
                             "sentence shown cites one"),
}

# The review's refusal codes (`draft_review`, the generators' own reviews).
REVIEW_CODES: dict[str, str] = {
    "unparseable": "the generator's reply could not be read",
    "uncited_sentence": "a factual sentence had no verified citation",
    "unsupported_number": "a sentence stated a number its quotes do not contain",
    "unsupported_claim": "a sentence said more than its quotes",
    "no_grounded_sentence": "no sentence kept a verified citation",
    "low_support": "too few of the citations attempted were verified",
    "refusal_cited": "a cited sentence said the sources do not answer",
    "non_answering_quote": "a sentence cited quotes that do not answer the question",
    "contradicts_quote": "a sentence gave another answer than its quotes",
}

# Detectors whose conflicts a verdict can name (`decision.conflicts`).
CONFLICT_DETECTORS: dict[str, str] = {
    "values": "the values of the disputed attribute differ (dates, money, durations, places)",
    "spans": "the answers read from two sentences differ",
    "reader": "two sentences the reader finds answering give different answers",
    "kept": "the model's kept answer disagrees with an answering sentence of another source",
}


def code_of(reason: str) -> tuple[str, str | None]:
    family, _, detail = reason.partition(":")
    return family, detail or None


def is_known(reason: str) -> bool:
    """The reason is on the documented list (with a known detail for a family code)."""
    family, detail = code_of(reason)
    if family not in REASONS:
        return False
    if family == "review_refused":
        return detail in REVIEW_CODES
    if family == "conflict":
        return detail in CONFLICT_DETECTORS
    return detail is None


def verdict(
    reason: str,
    *,
    outcome: str | None = None,
    stage: str | None = None,
    scores: Mapping[str, float] | None = None,
    thresholds: Mapping[str, float] | None = None,
    not_composed: tuple[Conflict, ...] = (),
) -> Verdict:
    """A verdict for `reason`; outcome and stage default to the reason's own."""
    if not is_known(reason):
        raise ValueError(f"unknown verdict reason {reason!r}: add it to REASONS")
    family, _ = code_of(reason)
    default_outcome = {"answered": "answered", "conflict": "conflict"}.get(family, "abstained")
    return amended(Verdict(outcome=outcome or default_outcome, stage=stage or REASONS[family][0],
                           reason=reason, scores=dict(scores or {}),
                           thresholds=dict(thresholds or {}), conflicts_not_composed=not_composed))


def amended(v: Verdict, **update) -> Verdict:
    """The verdict with `update` applied and its explanation said again to match."""
    if update.get("reason") is not None and not is_known(update["reason"]):
        raise ValueError(f"unknown verdict reason {update['reason']!r}: add it to REASONS")
    v = v.model_copy(update=update)
    return v.model_copy(update={"explanation": explain(v)})


def _number(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".") if isinstance(value, float) else str(value)


def explain(v: Verdict) -> str:
    """The verdict in words: what was decided, by which stage, why, with its figures."""
    family, detail = code_of(v.reason)
    words = REASONS.get(family, ("", v.reason))[1]
    if family == "review_refused" and detail:
        words = f"{words}: {REVIEW_CODES.get(detail, detail)}"
    elif family == "conflict" and detail:
        words = f"{words} ({CONFLICT_DETECTORS.get(detail, detail)})"
    decided = {"answered": "Answered", "abstained": "Abstained",
               "conflict": "Sources disagree"}[v.outcome]
    parts = [f"{decided} at the {v.stage} stage ({v.reason}): {words}."]
    figures = [f"{name} {_number(value)}" for name, value in v.scores.items()]
    figures += [f"{name} {_number(value)}" for name, value in v.thresholds.items()]
    if figures:
        parts.append("Figures: " + ", ".join(figures) + ".")
    for c in v.conflicts_not_composed:
        parts.append(f"A disagreement on {c.attribute} ({' vs '.join(c.values)}) was found "
                     "but could not be shown with verified quotes.")
    return " ".join(parts)
