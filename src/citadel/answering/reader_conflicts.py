"""Conflicts the reader can see: two documents that answer the question differently.

The general rule (issue 30), run by the engine after the number/date check and the typed
span check found nothing: two sentences of different documents that each *answer* the
question, with answers that differ and are of the same kind, are a conflict.

* A sentence answers when the judgement says so (`SentenceJudgement.answers`), or when the
  evidence reader alone is confident it does (`reader` ≥ `READER_ANSWERS`): the judgement's
  threshold is tuned for releasing one answer, and a swapped twin of the answering
  sentence must count however the combiner weighs the rest of its chunk.
* Its answer is the reader's span (`answer_text`), else the tagger's typed span. It does not
  depend on the tagger knowing the name: "Rotterdam" counts when the reader marks it.
* Answers are compared by `answer_norm.relation`: agreeing or compatible answers ("in 1998"
  / "in March 1998", "Lyon, France" / "Lyon") are no conflict, nor are answers of different
  kinds (a year and a name: the reader read two different questions into the sentences).
* The two sentences must be about the same focus (`span_conflicts.same_focus`: the
  question words each states overlap, same names of the question, no excluding scope), and
  neither may also state the other's answer ("UK orders ship from Leeds, EU orders from
  Utrecht" describes two cases).

The conflict is resolved exactly as every other (`conflicts.resolve`: follow a clearly more
authoritative side and say so, else flag and say which is more authoritative and newer).

`kept_conflict` is the same rule for a language model's answer: when the sentences the gate
kept cite one side and the reader finds an answering sentence of another document that
disagrees, the answer carries the conflict too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from citadel.answering.answer_norm import NormalAnswer, normalise, relation, states
from citadel.answering.conflicts import DEFAULT_AUTHORITY_GAP, resolve, surface
from citadel.answering.span_conflicts import KIND_NOUN, same_focus, sentence_side
from citadel.gate import GateResult
from citadel.records import Conflict, ConflictSide, Context, Judgement, SentenceJudgement
from citadel.text.terms import content_terms

# The reader's probability at which a sentence counts as answering for this rule, whatever
# the combined score. Chosen with MIN_SIMILAR on the counterfactual cases and the SQuAD
# answerable questions, leaving one article out at a time (docs/conflicts.md): 7 of 8
# folds chose (0.3, 0.5), the eighth (0.3, 0.4).
READER_ANSWERS = 0.3
# Two documents that disagree on one fact say much the same around it ("returns are sent to
# the warehouse in Leeds" / "send all returns to our Rotterdam warehouse"); two sentences
# about different things that the reader both finds topical share few words (SQuAD: a
# fifth of answerable questions got a made-up conflict without this). Jaccard of content
# words, answers left out.
MIN_SIMILAR = 0.5


def answer_of(s: SentenceJudgement) -> NormalAnswer | None:
    """The sentence's answer, normalised: the reader's span, else the tagger's span."""
    if s.answer_text:
        return normalise(s.answer_text, s.answer.kind if s.answer else None)
    if s.span_text:
        return normalise(s.span_text, s.span.kind if s.span else None)
    return None


def answers(s: SentenceJudgement, min_reader: float = READER_ANSWERS) -> bool:
    return s.answers or (s.reader is not None and s.reader >= min_reader)


def similarity(a: SentenceJudgement, na: NormalAnswer, b: SentenceJudgement,
               nb: NormalAnswer) -> float:
    """Jaccard of the two sentences' content words, their answers' words left out."""
    answer_terms = set(content_terms(f"{na.text} {nb.text}"))
    ta = set(content_terms(a.text)) - answer_terms
    tb = set(content_terms(b.text)) - answer_terms
    return len(ta & tb) / len(ta | tb) if ta | tb else 0.0


def _disagree(a: SentenceJudgement, na: NormalAnswer, b: SentenceJudgement,
              nb: NormalAnswer, entities: set[str], min_similar: float = MIN_SIMILAR) -> bool:
    return (a.document_id != b.document_id and relation(na, nb) == "conflict"
            and same_focus(a, b, entities) and not states(a.text, nb) and not states(b.text, na)
            and similarity(a, na, b, nb) >= min_similar)


def _conflict(anchor: SentenceJudgement, anchor_answer: NormalAnswer,
              rivals: Iterable[tuple[SentenceJudgement, NormalAnswer]], context: Context,
              authority_gap: float) -> Conflict:
    blocks = {b.label: b for b in context.blocks}
    sides = [sentence_side(anchor, anchor_answer.text, blocks)]
    sides += [sentence_side(s, n.text, blocks) for s, n in rivals]

    def same(x: ConflictSide, y: ConflictSide) -> bool:
        nx, ny = normalise(x.value), normalise(y.value)
        return nx is not None and ny is not None and relation(nx, ny) != "conflict"

    def attribute(lead: ConflictSide, others: list[ConflictSide]) -> str:
        kind = anchor.answer.kind if anchor.answer else anchor.span.kind if anchor.span \
            else "ANSWER"
        words = surface(lead.quote, set(anchor.matched)) or "the answer"
        return f"{words} ({KIND_NOUN.get(kind, 'answer')})"

    return resolve(sides, same, attribute, authority_gap)


def _rivals(anchor: SentenceJudgement, anchor_answer: NormalAnswer,
            pool: list[tuple[SentenceJudgement, NormalAnswer]], entities: set[str]
            ) -> list[tuple[SentenceJudgement, NormalAnswer]]:
    """One disagreeing sentence per other document, its best."""
    found: dict[str, tuple[SentenceJudgement, NormalAnswer]] = {}
    for s, n in pool:
        if s.document_id not in found and _disagree(anchor, anchor_answer, s, n, entities):
            found[s.document_id] = (s, n)
    return list(found.values())


def _answering(judgement: Judgement, min_reader: float
               ) -> list[tuple[SentenceJudgement, NormalAnswer]]:
    out = []
    for s in judgement.sentences:  # best first
        n = answer_of(s) if answers(s, min_reader) else None
        if n is not None:
            out.append((s, n))
    return out


def reader_conflict(
    judgement: Judgement, context: Context, *, authority_gap: float = DEFAULT_AUTHORITY_GAP,
    min_reader: float = READER_ANSWERS,
) -> Conflict | None:
    """The disagreement between answering sentences of different documents, anchored on
    the best answering sentence that has one; None when they all agree."""
    pool = _answering(judgement, min_reader)
    entities = set(judgement.question.entities)
    for anchor, answer in pool:
        rivals = _rivals(anchor, answer, pool, entities)
        if rivals:
            return _conflict(anchor, answer, rivals, context, authority_gap)
    return None


def _squash(text: str) -> str:
    return re.sub(r"\W+", " ", text.lower()).strip()


def kept_conflict(
    result: GateResult, judgement: Judgement, context: Context, *,
    authority_gap: float = DEFAULT_AUTHORITY_GAP, min_reader: float = READER_ANSWERS,
) -> Conflict | None:
    """A language model's kept answer against the reader: the judged sentences its verified
    quotes hold (the model vouches that they answer), each checked against the reader's
    answering sentences of other documents."""
    quotes = [(c.chunk_id, _squash(c.quote)) for c in result.citations]
    cited = [s for s in judgement.sentences
             if any(chunk == s.chunk_id and q and (q in _squash(s.text) or _squash(s.text) in q)
                    for chunk, q in quotes)]
    pool = _answering(judgement, min_reader)
    entities = set(judgement.question.entities)
    for anchor in cited:
        answer = answer_of(anchor)
        if answer is None:
            continue
        rivals = _rivals(anchor, answer, pool, entities)
        if rivals:
            return _conflict(anchor, answer, rivals, context, authority_gap)
    return None
