"""Claim support: does a quote support the sentence that cites it?

No NLI model can be installed here, so the default scorer is a transparent, deterministic
lexical one. It is a pluggable `ClaimSupportScorer`: anything with `name`, `threshold` and
`score(claim, evidence) -> float in 0..1` can replace it (an NLI model's entailment
probability, for instance).

`LexicalClaimScorer.score` = coverage x agreement, where
  coverage  = 0.7 x share of the claim's content terms found in the evidence (a shared
              5-letter prefix counts: regulate / regulation)
            + 0.3 x share of the claim's entities (names, acronyms, tokens with digits)
              found in the evidence (content-term share alone when the claim has none);
  agreement = product of the penalties that apply:
              numbers   x0    the claim states a number or date the evidence lacks (a veto)
              negation  x0.3  one side is negated ("not", "no", "never", "without",
                               "unrelated" ...), the other is not
              direction x0.3  one side only says "increase/higher/faster/positive", the other
                               only "decrease/lower/slower/negative".
A claim is supported when the score is at least `threshold`, 0.31: calibrated on SciFact's
SUPPORT vs CONTRADICT rationales (one half of the claims; accuracy on the other half is in
docs/evaluation.md). One disagreement therefore fails even a fully covered claim.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from citadel.text.terms import STOPWORDS, stem, tokens

# Words whose presence flips a statement. STOPWORDS drops "no"/"not", so they are read here.
_NEGATIONS = frozenset(
    """not no never none neither nor cannot can't won't isn't aren't wasn't weren't don't
    doesn't didn't hasn't haven't hadn't shouldn't wouldn't couldn't without lack lacks
    lacking absence absent unable fail fails failed unrelated unaffected ineffective""".split()  # noqa: SIM905
)
_UP = ("increas", "higher", "rais", "elevat", "enhanc", "promot", "upregulat", "up-regulat",
       "greater", "improv", "activat", "induc", "stimulat", "accelerat", "gain", "more",
       "positiv", "faster", "better")
_DOWN = ("decreas", "lower", "reduc", "diminish", "inhibit", "suppress", "downregulat",
         "down-regulat", "less", "fewer", "impair", "attenuat", "prevent", "block", "declin",
         "loss", "los", "negativ", "slower", "worse")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_ENTITY = re.compile(r"\b(?:[A-Z][A-Za-z0-9-]*[A-Z0-9][A-Za-z0-9-]*|[A-Za-z]*\d[A-Za-z0-9-]*)\b")
_PREFIX = 5  # shared prefix length that counts as the same word (regulate / regulation)

# A number the evidence lacks vetoes support ("30 days" is never evidence for "14 days").
NUMBER_PENALTY = 0.0
NEGATION_PENALTY = 0.3
DIRECTION_PENALTY = 0.3
COVERAGE_WEIGHT = 0.7
DEFAULT_THRESHOLD = 0.31


@runtime_checkable
class ClaimSupportScorer(Protocol):
    """Scores how well `evidence` supports `claim`, in 0..1; supported when >= threshold."""

    name: str
    threshold: float

    def score(self, claim: str, evidence: str) -> float: ...


def supports(scorer: ClaimSupportScorer, claim: str, evidence: str) -> bool:
    return scorer.score(claim, evidence) >= scorer.threshold


@dataclass(frozen=True)
class Explanation:
    """Every part of a lexical score, so a reader can see why a claim passed or failed."""

    score: float
    term_coverage: float
    entity_coverage: float | None
    missing_terms: tuple[str, ...] = ()
    penalties: tuple[str, ...] = field(default_factory=tuple)


def _terms(text: str) -> set[str]:
    return {stem(t) for t in tokens(text) if t not in STOPWORDS and t not in _NEGATIONS
            and not t.isdigit()}


def _found(term: str, evidence_terms: set[str], evidence_prefixes: set[str]) -> bool:
    return term in evidence_terms or (len(term) >= _PREFIX and term[:_PREFIX] in evidence_prefixes)


def _numbers(text: str) -> set[str]:
    return {n.replace(",", "") for n in _NUMBER.findall(text)}


def _negated(text: str) -> bool:
    words = [w.lower() for w in re.findall(r"[A-Za-z']+", text)]
    return any(w in _NEGATIONS or w.endswith("n't") for w in words)


def _direction(text: str) -> set[str]:
    words = [w.lower() for w in re.findall(r"[A-Za-z-]+", text)]
    found: set[str] = set()
    for w in words:
        if any(w.startswith(p) for p in _UP):
            found.add("up")
        if any(w.startswith(p) for p in _DOWN):
            found.add("down")
    return found


def _entities(text: str) -> set[str]:
    return {m.group().lower() for m in _ENTITY.finditer(text)}


@dataclass(frozen=True)
class LexicalClaimScorer:
    """Deterministic content-word / entity coverage with number, negation and direction
    agreement. See the module docstring for the formula."""

    threshold: float = DEFAULT_THRESHOLD
    name: str = "lexical-v1"

    def explain(self, claim: str, evidence: str) -> Explanation:
        claim_terms = _terms(claim)
        ev_terms = _terms(evidence)
        ev_prefixes = {t[:_PREFIX] for t in ev_terms if len(t) >= _PREFIX}
        if not claim_terms:
            return Explanation(0.0, 0.0, None, penalties=("claim has no content terms",))
        missing = sorted(t for t in claim_terms if not _found(t, ev_terms, ev_prefixes))
        term_cov = 1 - len(missing) / len(claim_terms)
        claim_entities = _entities(claim)
        entity_cov: float | None = None
        coverage = term_cov
        if claim_entities:
            ev_lower = evidence.lower()
            entity_cov = sum(e in ev_lower for e in claim_entities) / len(claim_entities)
            coverage = COVERAGE_WEIGHT * term_cov + (1 - COVERAGE_WEIGHT) * entity_cov
        agreement = 1.0
        penalties: list[str] = []
        claim_numbers = _numbers(claim)
        if claim_numbers - _numbers(evidence):
            agreement *= NUMBER_PENALTY
            penalties.append("number: " + ", ".join(sorted(claim_numbers - _numbers(evidence))))
        if _negated(claim) != _negated(evidence):
            agreement *= NEGATION_PENALTY
            penalties.append("negation differs")
        c_dir, e_dir = _direction(claim), _direction(evidence)
        if c_dir and e_dir and not (c_dir & e_dir):
            agreement *= DIRECTION_PENALTY
            penalties.append(f"direction: claim {sorted(c_dir)}, evidence {sorted(e_dir)}")
        return Explanation(round(coverage * agreement, 6), round(term_cov, 6),
                           None if entity_cov is None else round(entity_cov, 6),
                           tuple(missing), tuple(penalties))

    def score(self, claim: str, evidence: str) -> float:
        return self.explain(claim, evidence).score


class ReaderClaimScorer:
    """The evidence reader as a claim judge: the claim in the question's place, the quote as
    the passage; the score is the reader's probability that the quote supports the claim.
    Trained on SciFact claims of the calibration half (SUPPORT vs CONTRADICT and unrelated
    sentences) besides SQuAD; its agreement with the held-out half's labels is on the model
    card (`agreement`) and beside every suite's citation precision."""

    name = "reader"

    def __init__(self, threshold: float = 0.5, model_dir: Path | None = None) -> None:
        from citadel.answering.reader import Reader

        self.threshold = threshold
        self.reader = Reader(model_dir)
        self.name = f"reader:{self.reader.version}"

    def score(self, claim: str, evidence: str) -> float:
        return self.reader.score(claim, [("", evidence)])[0].probability

    def agreement(self) -> dict:
        """The reader's figures as a claim judge on SciFact's held-out claims (model card)."""
        return dict(self.reader.card.get("held_out", {}).get("scifact_claims") or {})
