"""Scripted readers: generators that stand in for the language model during evaluation, so
the decision layer (the judgement, the citation gate, review) is measured apart from any
model's skill.

* `OracleReader` knows each question's gold answers (the suite tells it, with where they
  are when it can) and cites the context sentence that holds one there, else the first that
  states one; it abstains when none does. Run through the engine, what
  it loses is lost by the decision layer or by retrieval, never by reading.
* `GuesserReader` always answers with the context sentence sharing the most content words
  with the question: a reader that never knows when to stop. What the engine still withholds
  from it is what the decision layer stops on its own.

Both set `decides = True`: the engine treats them as a model that decides by itself whether
to answer. They are evaluation instruments only: `get_generator` and the settings never make
one (`make_reader` is the only way in, and only `citadel eval --reader` calls it).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from citadel.answering.generators.base import Generator
from citadel.evaluation.metrics import fact_present
from citadel.records import (
    Context,
    Draft,
    DraftCitation,
    DraftSentence,
    DraftSpan,
    RetryFeedback,
)
from citadel.text.quotes import locate_span
from citadel.text.sentences import display_text, sentence_spans
from citadel.text.terms import content_terms

READERS = ("oracle", "guesser")
PROMPT_VERSION = "scripted-v1"

__all__ = ["READERS", "GuesserReader", "OracleReader", "ScriptedReader", "make_reader"]


@dataclass(frozen=True)
class Statement:
    """One context sentence a reader may cite: its block label and its text as written in
    the chunk (the quote the gate verifies)."""

    label: str
    raw: str
    document_id: str = ""
    start: int = 0  # offsets of the sentence in its document
    end: int = 0

    @property
    def text(self) -> str:
        return display_text(self.raw)


def statements(context: Context) -> Iterator[Statement]:
    """The context's sentences in context order, without headings and questions: neither
    states a fact a reader could answer with."""
    for block in context.blocks:
        content = block.chunk.content
        for start, end in sentence_spans(content):
            raw = content[start:end]
            if raw.lstrip().startswith("#") or raw.rstrip().endswith("?"):
                continue
            at = block.chunk.start
            yield Statement(block.label, raw, block.chunk.document_id, at + start, at + end)


class ScriptedReader(Generator):
    """A generator whose behaviour is fixed by a script, not learned. `expect` tells it the
    gold answers of the next question (only the oracle uses them)."""

    prompt_version = PROMPT_VERSION
    decides = True

    def expect(self, question: str, answers: Sequence[str],  # noqa: B027
               where: Sequence[tuple[str, int, int]] = ()) -> None:
        """Record `question`'s gold answers (empty: unanswerable) and, when the suite knows
        them, where they are: (document_id, start, end) in the document; ignored by
        default."""

    def _abstain(self) -> Draft:
        return Draft(abstain=True, generator=self.name, prompt_version=self.prompt_version)

    def _cite(self, statement: Statement, span: str | None = None) -> Draft:
        """One sentence, citing its own exact text, and the answer's words if known."""
        sentence = DraftSentence(text=statement.text, citations=(
            DraftCitation(label=statement.label, quote=statement.raw),))
        return Draft(sentences=(sentence,),
                     span=(DraftSpan(label=statement.label, text=span, kind="NOUN")
                           if span else None),
                     generator=self.name, prompt_version=self.prompt_version)


class OracleReader(ScriptedReader):
    """Cites the first context sentence that holds a gold answer; abstains otherwise.

    `gold` maps question text to its gold answers; a question it lacks (or with none) is
    unanswerable to the oracle, so it abstains."""

    name = "oracle-reader"

    def __init__(self, gold: Mapping[str, Sequence[str]] | None = None) -> None:
        self.gold: dict[str, tuple[str, ...]] = {
            q: tuple(a) for q, a in (gold or {}).items()}
        self.where: dict[str, tuple[tuple[str, int, int], ...]] = {}

    def expect(self, question: str, answers: Sequence[str],
               where: Sequence[tuple[str, int, int]] = ()) -> None:
        self.gold[question] = tuple(answers)
        self.where[question] = tuple(where)

    def generate(
        self, question: str, context: Context, feedback: RetryFeedback | None = None
    ) -> Draft:
        golds = [a for a in self.gold.get(question, ()) if a.strip()]
        if not golds:
            return self._abstain()
        found = [st for st in statements(context) if fact_present(st.raw, golds)]
        # The sentence that holds the gold answer where the dataset put it, else the first
        # that states it (another mention of the same words may not answer).
        where = self.where.get(question, ())
        at_gold = [st for st in found if any(
            st.document_id == doc and st.start <= a and b <= st.end for doc, a, b in where)]
        for statement in at_gold or found:
            return self._cite(statement, gold_as_written(statement.raw, golds))
        return self._abstain()


def gold_as_written(sentence: str, golds: Sequence[str]) -> str | None:
    """The first gold answer found in `sentence`, in the sentence's own spelling (case and
    punctuation as the chunk has them), matched the way the gate matches spans."""
    for gold in golds:
        found = locate_span(gold, sentence)
        if found is not None:
            return sentence[found[0]:found[1]]
    return None


class GuesserReader(ScriptedReader):
    """Always answers (when the context states anything): the sentence sharing the most
    content words with the question, the first in context order on a tie."""

    name = "guesser-reader"

    def generate(
        self, question: str, context: Context, feedback: RetryFeedback | None = None
    ) -> Draft:
        asked = set(content_terms(question))
        best: Statement | None = None
        best_shared = -1
        for statement in statements(context):
            shared = len(asked & set(content_terms(statement.raw)))
            if shared > best_shared:
                best, best_shared = statement, shared
        return self._abstain() if best is None else self._cite(best)


def make_reader(name: str) -> ScriptedReader:
    """A new scripted reader by its `--reader` name."""
    if name == "oracle":
        return OracleReader()
    if name == "guesser":
        return GuesserReader()
    raise ValueError(f"unknown reader {name!r}: choose {' or '.join(READERS)}")
