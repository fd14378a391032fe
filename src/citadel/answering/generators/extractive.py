"""The offline, deterministic generator: it answers with the context sentences that the
judgement stage found to answer the question, each tied to its label and its exact text as
the quote, and the answer span (the exact words, e.g. "Lyon") of the best one: the reader's
span head marks them, else the analyser's typed span of the expected kind.

It answers with the best answering sentence (the judgement's order: the evidence reader's
verdict, calibrated with the lexical features), and adds another (up to `max_sentences`) only
when that one states a different supported fact: it answers a part of the question the
first does not (a focus word only it states), and it is not a copy of a sentence already
chosen. No answering sentence: the draft abstains.

The judgement rides on the context (`Context.judgement`, set by the engine). A context
without one (a caller that skips the engine) is judged here with this generator's own judge.
"""

from __future__ import annotations

import threading

from citadel.answering.generators.base import Generator
from citadel.answering.judgement import Judge
from citadel.records import (
    Context,
    Draft,
    DraftCitation,
    DraftSentence,
    DraftSpan,
    Judgement,
    RetryFeedback,
    SentenceJudgement,
)
from citadel.text.quotes import normalize
from citadel.text.sentences import display_text
from citadel.text.terms import content_terms

__all__ = ["ExtractiveGenerator", "display_text"]
SAME_SENTENCE = 0.6  # content-word Jaccard above which two sentences say the same thing


class ExtractiveGenerator(Generator):
    name = "extractive"
    prompt_version = "extractive-v2"

    def __init__(self, support_threshold: float | None = None, max_sentences: int = 2,
                 judge: Judge | None = None) -> None:
        self.support_threshold = support_threshold
        self.max_sentences = max_sentences
        self._judge = judge
        self._lock = threading.Lock()

    def judge(self) -> Judge:
        with self._lock:
            if self._judge is None:
                self._judge = Judge(threshold=self.support_threshold)
            return self._judge

    def judgement(self, question: str, context: Context) -> Judgement:
        return context.judgement or self.judge().judge(question, context)

    def generate(
        self, question: str, context: Context, feedback: RetryFeedback | None = None
    ) -> Draft:
        judgement = self.judgement(question, context)
        answering = list(judgement.answering)
        best = judgement.sentences[0].score if judgement.sentences else 0.0
        if not answering:
            return Draft(abstain=True, confidence=best, generator=self.name,
                         prompt_version=self.prompt_version)
        chosen = choose(answering, self.max_sentences)
        sentences = tuple(
            DraftSentence(text=s.said or s.text,
                          citations=(DraftCitation(label=s.label, quote=s.text),))
            for s in chosen)
        first = chosen[0]
        span = answer_span(first)
        return Draft(sentences=sentences, span=span, confidence=first.score,
                     generator=self.name, prompt_version=self.prompt_version)


def answer_span(s: SentenceJudgement) -> DraftSpan | None:
    """The answer's exact words: the reader's span, else the analyser's typed span."""
    if s.answer is not None and s.answer_text:
        return DraftSpan(label=s.label, text=s.answer_text, kind=s.answer.kind)
    if s.span is not None and s.span_text:
        return DraftSpan(label=s.label, text=s.span_text, kind=s.span.kind)
    return None


def choose(answering: list[SentenceJudgement], limit: int) -> list[SentenceJudgement]:
    """The best answering sentence, then others that answer another part of the question."""
    chosen = [answering[0]]
    covered = set(answering[0].matched)
    for s in answering[1:]:
        if len(chosen) >= limit:
            break
        if not set(s.matched) - covered:
            continue  # says nothing about the question that the answer lacks
        words = set(content_terms(s.text))
        if any(normalize(s.text) == normalize(c.text) or _jaccard(words, set(
                content_terms(c.text))) >= SAME_SENTENCE for c in chosen):
            continue
        chosen.append(s)
        covered |= set(s.matched)
    return chosen


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0
