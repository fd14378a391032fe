"""The offline, deterministic generator: it answers with the context sentences that best
answer the question, each tied to its label and its exact text as the quote.

A sentence's support score, in 0..~1.15:
    0.5 x coverage   share of the question's content terms in the sentence (terms found only
                     in the chunk's title/section count half)
  + 0.3 x dense      the chunk's dense similarity to the question
  + 0.2 x authority  the chunk's document authority (0..1)
  ± 0.15 if the question asks for a duration / amount / count / time and the sentence has
         one (or has none)
  - 0.1 for a conditional sentence ("If ..."), which answers a narrower question.
Below `support_threshold` for every sentence, the draft abstains.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from citadel.answering.generators.base import Generator
from citadel.records import Context, Draft, DraftCitation, DraftSentence, RetryFeedback
from citadel.text.quotes import normalize
from citadel.text.sentences import sentence_spans
from citadel.text.terms import content_terms

_MARKUP = re.compile(r"^\s*(?:[-*+>]|\d+[.)])\s+|\*\*|__|`")
_DURATION = re.compile(
    r"\b\d+(?:[.,]\d+)?\s*(?:-|–|to)?\s*\d*\s*(?:business |working |calendar )?"
    r"(?:minute|hour|day|week|month|year)s?\b",
    re.I,
)
_MONEY = re.compile(r"[£€$]\s?\d|\b\d+(?:[.,]\d+)?\s*(?:%|percent|pounds|euros|GBP|EUR)", re.I)
_NUMBER = re.compile(r"\b\d+")
_TIME = re.compile(r"\b\d{1,2}(?::\d{2})?\s*(?:am|pm)\b|\b(?:monday|tuesday|wednesday|"
                   r"thursday|friday|saturday|sunday)\b", re.I)

# Question cue -> the kind of text that answers it.
_CUES: tuple[tuple[re.Pattern[str], re.Pattern[str]], ...] = (
    (re.compile(r"\bhow (?:long|soon|quickly)\b|\bwithin how\b|\bhow many (?:days|hours|weeks|"
                r"months|years)\b|\bexpire|\bvalid\b", re.I), _DURATION),
    (re.compile(r"\bhow much\b|\bcost|\bprice|\bfee\b|\bcharge|\bdiscount", re.I), _MONEY),
    (re.compile(r"\bhow many\b", re.I), _NUMBER),
    (re.compile(r"\bwhen\b|\bwhat time\b|\bhours\b|\bopen\b", re.I), _TIME),
)

_CUE_WORDS = frozenset({"long", "much", "many", "soon", "quickly", "time"})
MIN_SENTENCE_TERMS = 3
CUE_BONUS = 0.15
# "If an item arrives faulty, ..." answers a narrower question than the one asked.
_CONDITIONAL = re.compile(r"(?:if|unless|when|where|in case)\b", re.I)
CONDITIONAL_PENALTY = 0.1


@dataclass(frozen=True)
class Scored:
    score: float
    order: int
    label: str
    text: str


def display_text(sentence: str) -> str:
    """A sentence without Markdown list/emphasis markup (the gate ignores punctuation)."""
    return re.sub(r"\s+", " ", _MARKUP.sub("", sentence)).strip()


class ExtractiveGenerator(Generator):
    name = "extractive"
    prompt_version = "extractive-v1"

    def __init__(self, support_threshold: float = 0.6, max_sentences: int = 2) -> None:
        self.support_threshold = support_threshold
        self.max_sentences = max_sentences

    def score_sentences(self, question: str, context: Context) -> list[Scored]:
        q_terms = set(content_terms(question))
        if not q_terms:
            return []
        cues = [answer for cue, answer in _CUES if cue.search(question)]
        if cues:  # "long" in "how long" asks for a duration; the cue scores that instead
            q_terms -= _CUE_WORDS
            q_terms = q_terms or {"_"}
        scored: list[Scored] = []
        for block in context.blocks:
            chunk = block.chunk
            heading_terms = set(content_terms(f"{chunk.title} {chunk.section}"))
            dense = max(0.0, min(1.0, block.ranked.dense_score or 0.0))
            for start, end in sentence_spans(chunk.content):
                raw = chunk.content[start:end]
                if raw.lstrip().startswith("#"):
                    continue  # a heading is a label, not an answer
                text = display_text(raw)
                s_terms = set(content_terms(text))
                if len(s_terms) < MIN_SENTENCE_TERMS:
                    continue
                direct = len(q_terms & s_terms) / len(q_terms)
                if direct == 0:
                    continue
                inherited = len((q_terms - s_terms) & heading_terms) / len(q_terms)
                coverage = direct + 0.5 * inherited
                bonus = 0.0
                if cues:
                    bonus = CUE_BONUS if any(p.search(text) for p in cues) else -CUE_BONUS
                if _CONDITIONAL.match(text):
                    bonus -= CONDITIONAL_PENALTY
                score = 0.5 * coverage + 0.3 * dense + 0.2 * chunk.authority + bonus
                scored.append(Scored(round(score, 6), len(scored), block.label, text))
        scored.sort(key=lambda s: (-s.score, s.order))
        return scored

    def generate(
        self, question: str, context: Context, feedback: RetryFeedback | None = None
    ) -> Draft:
        scored = self.score_sentences(question, context)
        best = scored[0].score if scored else 0.0
        if best < self.support_threshold:
            return Draft(abstain=True, confidence=round(best, 4), generator=self.name,
                         prompt_version=self.prompt_version)
        chosen: list[Scored] = []
        seen: set[str] = set()
        for s in scored:
            if len(chosen) >= self.max_sentences or s.score < max(self.support_threshold,
                                                                   0.8 * best):
                break
            key = normalize(s.text)
            if key in seen:
                continue
            seen.add(key)
            chosen.append(s)
        sentences = tuple(
            DraftSentence(text=s.text, citations=(DraftCitation(label=s.label, quote=s.text),))
            for s in chosen
        )
        return Draft(sentences=sentences, confidence=round(best, 4), generator=self.name,
                     prompt_version=self.prompt_version)
