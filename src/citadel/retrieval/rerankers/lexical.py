"""A deterministic reranker from signals the score fusion does not see.

BM25 and dense similarity score bags of terms. This reranker looks at how a candidate uses
the question's terms, with term weights taken from the candidate pool itself (a term every
candidate shares tells nothing apart):

  coverage   weighted share of the question's content terms in the candidate
  phrase     share of the question's adjacent term pairs that are adjacent in the candidate
  proximity  how tightly the matched terms cluster (matched terms / smallest window holding
             them), times the share of the question's terms matched (two adjacent terms out
             of ten must not look like a perfect match)
  heading    weighted share of the question's terms in the title and section
  answer     for "how many / how long / how much" questions: the candidate states a number
             (with a duration unit for "how long"); not used for other questions

The signals are mixed into one value in 0..1 and blended with the fused retrieval score
(divided by the pool's best, so that close fused scores stay close):
rerank = (1 - blend) x fused + blend x signals.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from citadel.records import RankedChunk
from citadel.retrieval.rerankers.base import Reranker
from citadel.text.terms import content_terms

_HOW_LONG = re.compile(r"\bhow (?:long|soon|quickly|often)\b|\bhow many (?:days|hours|weeks|"
                       r"months|years|minutes)\b|\bwithin how\b", re.I)
_HOW_MANY = re.compile(r"\bhow (?:many|much|old|far|big|large)\b|\bwhat (?:percentage|"
                       r"proportion|fraction|number|amount)\b", re.I)
_DURATION = re.compile(r"\b\d+(?:[.,]\d+)?\s*(?:-|–|to)?\s*\d*\s*(?:business |working |"
                       r"calendar )?(?:second|minute|hour|day|week|month|year)s?\b", re.I)
_NUMBER = re.compile(r"\d")

# Chosen on SciFact train claims (benchmarks/rerank_quality.py), never on the test claims.
WEIGHTS = {"coverage": 0.4, "phrase": 0.1, "proximity": 0.1, "heading": 0.4, "answer": 0.1}


@dataclass(frozen=True)
class Signals:
    coverage: float
    phrase: float
    proximity: float
    heading: float
    answer: float | None  # None: the question does not ask for a number

    def combined(self) -> float:
        parts = {"coverage": self.coverage, "phrase": self.phrase,
                 "proximity": self.proximity, "heading": self.heading}
        if self.answer is not None:
            parts["answer"] = self.answer
        total = sum(WEIGHTS[k] for k in parts)
        return sum(WEIGHTS[k] * v for k, v in parts.items()) / total


def numeric_question(question: str) -> re.Pattern[str] | None:
    """The pattern an answer must contain, for questions that ask for a quantity."""
    if _HOW_LONG.search(question):
        return _DURATION
    if _HOW_MANY.search(question):
        return _NUMBER
    return None


def pool_weights(terms: set[str], docs: Sequence[set[str]]) -> dict[str, float]:
    """Inverse document frequency within the candidate pool (smoothed, always > 0)."""
    n = len(docs)
    return {t: math.log(1.0 + (n + 1) / (1 + sum(t in d for d in docs))) for t in terms}


def phrase_score(q_seq: Sequence[str], d_seq: Sequence[str]) -> float:
    pairs = {(a, b) for a, b in zip(q_seq, q_seq[1:], strict=False) if a != b}
    if not pairs:
        return 0.0
    d_pairs = set(zip(d_seq, d_seq[1:], strict=False))
    return len(pairs & d_pairs) / len(pairs)


def proximity_score(q_terms: set[str], d_seq: Sequence[str]) -> float:
    """(Matched distinct terms / length of the smallest window holding all of them) x share
    of the question's terms matched."""
    positions = [(i, t) for i, t in enumerate(d_seq) if t in q_terms]
    need = {t for _, t in positions}
    if len(need) < 2:
        return 0.0
    best = len(d_seq)
    counts: dict[str, int] = {}
    have = 0
    left = 0
    for right in range(len(positions)):
        t = positions[right][1]
        counts[t] = counts.get(t, 0) + 1
        if counts[t] == 1:
            have += 1
        while have == len(need):
            best = min(best, positions[right][0] - positions[left][0] + 1)
            lt = positions[left][1]
            counts[lt] -= 1
            if counts[lt] == 0:
                have -= 1
            left += 1
    return (len(need) / best) * (len(need) / len(q_terms))


def signals(
    question: str, ranked: Sequence[RankedChunk]
) -> list[Signals]:
    q_seq = content_terms(question)
    q_terms = set(q_seq)
    answer_pattern = numeric_question(question)
    bodies = [content_terms(r.chunk.content) for r in ranked]
    headings = [set(content_terms(f"{r.chunk.title} {r.chunk.section}")) for r in ranked]
    doc_sets = [set(b) | h for b, h in zip(bodies, headings, strict=True)]
    weights = pool_weights(q_terms, doc_sets)
    q_weight = sum(weights.values()) or 1.0
    out: list[Signals] = []
    for r, body, heading, terms in zip(ranked, bodies, headings, doc_sets, strict=True):
        answer = None
        if answer_pattern is not None:
            answer = 1.0 if answer_pattern.search(r.chunk.content) else 0.0
        out.append(Signals(
            coverage=sum(w for t, w in weights.items() if t in terms) / q_weight,
            phrase=phrase_score(q_seq, body),
            proximity=proximity_score(q_terms, body),
            heading=sum(w for t, w in weights.items() if t in heading) / q_weight,
            answer=answer,
        ))
    return out


def normalised(values: Sequence[float]) -> list[float]:
    """Scaled so the best is 1; gaps stay proportional. Non-positive pools count as equal."""
    hi = max(values)
    if hi <= 1e-12:
        return [1.0] * len(values)
    return [max(v, 0.0) / hi for v in values]


class LexicalReranker(Reranker):
    name = "lexical"

    def __init__(self, blend: float = 0.4) -> None:  # chosen on SciFact train claims
        if not 0.0 <= blend <= 1.0:
            raise ValueError("blend must be in 0..1")
        self.blend = blend

    def score(self, question: str, ranked: Sequence[RankedChunk]) -> list[float]:
        if not content_terms(question):
            return [r.retrieval_score for r in ranked]
        fused = normalised([r.retrieval_score for r in ranked])
        mixed = [s.combined() for s in signals(question, ranked)]
        return [(1.0 - self.blend) * f + self.blend * m for f, m in zip(fused, mixed, strict=True)]
