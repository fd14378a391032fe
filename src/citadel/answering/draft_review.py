"""Reviewing a gated draft: is it good enough to show, and if not, what exactly was wrong?

The gate already removed every citation it could not verify; this decides whether what is
left may be shown. A draft is refused when its output was unusable, when a factual sentence
lost all its citations, when a kept sentence states a number none of its quotes contains or
says more than they do (`citadel.text.support`: too short a quote, a name they lack, under
half of its content words in them), or when fewer than `support_threshold` of the citations
the generator attempted survived.
The problems are phrased for the model, so a retry can fix them.

`review_answers` adds the judgement stage's check (run by the engine for every generator): a
kept sentence whose verified quotes do not answer the question, or that states a name,
number or date its answering quotes do not (another answer than the evidence gives), is
refused like an uncited one.
"""

from __future__ import annotations

import re
from collections import Counter

from citadel.answering.generators.structured_output import is_factual, is_refusal, numbers_in
from citadel.gate import GateResult
from citadel.records import (
    Citation,
    Context,
    Draft,
    DroppedCitation,
    GenerationAttempt,
    RetryFeedback,
    SentenceJudgement,
)
from citadel.text.quotes import normalize
from citadel.text.support import claim_support

MAX_PROBLEMS = 8
# A generated sentence must be backed by its quotes (citadel.text.support): at least this
# many quoted words, and this share of its content words found in them (no name missing).
MIN_QUOTE_WORDS = 4
MIN_CLAIM_COVERAGE = 0.5
_SHOWN = 100  # characters of a quote or sentence repeated back to the model


def citations_attempted(draft: Draft) -> int:
    return sum(len(s.citations) for s in draft.sentences) + len(draft.unattached)


def citation_drops(result: GateResult) -> list[DroppedCitation]:
    """Drops of citations (not of whole sentences)."""
    return [d for d in result.dropped if d.reason != "uncited_sentence"]


def review(draft: Draft, result: GateResult, *, support_threshold: float) -> RetryFeedback | None:
    """None if the gated draft may be shown (or is an honest abstention), else why not."""
    if draft.failure:
        return RetryFeedback(
            reasons=("unparseable",),
            problems=(f"Your reply could not be used: {draft.failure}. Reply with exactly one "
                      "JSON object with the fields answer, citations and confidence.",),
        )
    if draft.abstain:
        return None
    reasons: list[str] = []
    problems: list[str] = []
    for d in citation_drops(result):
        problems.append(_describe_drop(d.reason, d.label, d.quote))
    uncited = [d.quote for d in result.dropped
               if d.reason == "uncited_sentence" and is_factual(d.quote)]
    if uncited:
        reasons.append("uncited_sentence")
        problems += [f'The sentence "{_short(s)}" has no valid citation.' for s in uncited]
    quotes_by_label: dict[str, list[str]] = {}
    for c in result.citations:
        quotes_by_label.setdefault(c.label, []).append(c.quote)
    for sentence in result.sentences:
        quoted = set().union(*(numbers_in(q) for lb in sentence.labels
                               for q in quotes_by_label.get(lb, [])))
        missing = sorted(numbers_in(sentence.text) - quoted)
        if missing:
            reasons.append("unsupported_number")
            problems.append(f'The sentence "{_short(sentence.text)}" states '
                            f"{', '.join(missing)}, which its quotes do not contain.")
        quotes = [q for lb in sentence.labels for q in quotes_by_label.get(lb, [])]
        problem = _unsupported(sentence.text, quotes)
        if problem:
            reasons.append("unsupported_claim")
            problems.append(problem)
    attempted = citations_attempted(draft)
    verified = attempted - len(citation_drops(result))
    if not result.sentences and "uncited_sentence" not in reasons:
        reasons.append("no_grounded_sentence")
        problems.append("No sentence of your answer kept a valid citation.")
    if attempted and verified / attempted < support_threshold:
        reasons.append("low_support")
        problems.append(f"Only {verified} of your {attempted} citations could be verified.")
    if not reasons:
        return None
    return RetryFeedback(reasons=tuple(dict.fromkeys(reasons)),
                         problems=tuple(dict.fromkeys(problems))[:MAX_PROBLEMS])


def _unsupported(text: str, quotes: list[str]) -> str | None:
    """Why the quotes do not back the sentence, phrased for the model; None if they do."""
    support = claim_support(text, quotes)
    if support.quote_words < MIN_QUOTE_WORDS:
        return (f'The quotes of "{_short(text)}" are too short to support it: quote at least '
                f"{MIN_QUOTE_WORDS} words of the sentence that says it.")
    if support.missing_names:
        return (f'The sentence "{_short(text)}" names {", ".join(support.missing_names)}, '
                "which its quotes do not contain.")
    if support.coverage < MIN_CLAIM_COVERAGE:
        return (f'The sentence "{_short(text)}" says more than its quotes: '
                f"{', '.join(support.missing_terms[:5])} are not in them. Say only what the "
                "quoted words say.")
    return None


def _describe_drop(reason: str, label: str | None, quote: str) -> str:
    shown = f'"{_short(quote)}"'
    if reason == "label_not_in_context":
        return f'"{_short(label or "", 60)}" is not the label of a block you were given.'
    if reason == "empty_quote":
        return f"Your citation of {label} has no quote copied from block {label}."
    if reason == "quote_not_found":
        return f"The quote {shown} is not in block {label}; copy quotes word for word."
    if reason == "unattached":
        return f"Your citation of {label} ({shown}) supports no sentence of your answer."
    return f"Your citation of {label} was rejected ({reason})."


def _short(text: str, limit: int = _SHOWN) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def attempt_record(
    draft: Draft, result: GateResult, feedback: RetryFeedback | None
) -> GenerationAttempt:
    attempted = citations_attempted(draft)
    drops = citation_drops(result)
    return GenerationAttempt(
        prompt_version=draft.prompt_version,
        citations_attempted=attempted,
        citations_verified=attempted - len(drops),
        dropped=dict(Counter(d.reason for d in result.dropped)),
        abstained=draft.abstain,
        problem=",".join(feedback.reasons) if feedback else None,
        relabelled=draft.relabelled,
    )


def review_refusals(result: GateResult) -> RetryFeedback | None:
    """A kept sentence saying the sources do not answer ("I don't have enough information
    ... [S1]") is an abstention, never a grounded answer, whichever generator wrote it."""
    refusals = [s.text for s in result.sentences if is_refusal(s.text)]
    if not refusals:
        return None
    return RetryFeedback(
        reasons=("refusal_cited",),
        problems=tuple(f'The sentence "{_short(t)}" says the blocks do not answer; if they do '
                       "not, answer only that, with no citation." for t in refusals)[:MAX_PROBLEMS],
    )


def review_answers(result: GateResult, context: Context) -> RetryFeedback | None:
    """None if every kept sentence cites a sentence that answers the question and states
    no other answer than its quotes give, else why not."""
    judgement = context.judgement
    if judgement is None:
        return None
    # A model's quote counts as answering at the looser `check` (fitted so that a capable
    # model citing the sentence that holds the answer is released): the model, not the
    # judgement, decided to answer; the judgement only refuses what it judges off-topic.
    answering = [s for s in judgement.sentences if s.answers or s.score >= judgement.check]
    reasons: list[str] = []
    problems: list[str] = []
    for sentence in result.sentences:
        cites = [c for c in result.citations if c.label in sentence.labels]
        backing = [j for j in answering if any(_covers(c, j, context) for c in cites)]
        if not backing:
            reasons.append("non_answering_quote")
            problems.append(f'The sentence "{_short(sentence.text)}" cites quotes that do not '
                            "answer the question; quote the sentence that does.")
        elif _other_answer(sentence.text, backing, cites):
            reasons.append("contradicts_quote")
            problems.append(f'The sentence "{_short(sentence.text)}" gives another answer than '
                            "its quotes; state what the quoted sentence says.")
    if not reasons:
        return None
    return RetryFeedback(reasons=tuple(dict.fromkeys(reasons)),
                         problems=tuple(dict.fromkeys(problems))[:MAX_PROBLEMS])


def _covers(citation: Citation, judged: SentenceJudgement, context: Context) -> bool:
    """The citation's quote overlaps the judged sentence (same block)."""
    block = context.get(citation.label)
    if block is None or judged.label != citation.label:
        return False
    start, end = citation.start - block.chunk.start, citation.end - block.chunk.start
    return start < judged.end and judged.start < end


_VALUE = re.compile(r"(?<!^)(?<![.!?]\s)\b[A-Z][\w'-]+|\b\d[\d.,:]*\b")


def _other_answer(text: str, backing: list[SentenceJudgement], cites: list[Citation]) -> bool:
    """The sentence states none of the answers its quotes give, but names a value (a capital
    word or a number) that no quote contains."""
    answers = [a for j in backing for a in (j.answer_text, j.span_text, *j.candidates) if a]
    if not answers:
        return False
    said = f" {normalize(text)} "
    if any(f" {normalize(a)} " in said for a in answers):
        return False
    quoted = " ".join(f" {normalize(c.quote)} " for c in cites)
    return any(f" {normalize(v)} " not in quoted for v in _VALUE.findall(text.strip()))
