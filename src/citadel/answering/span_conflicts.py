"""Conflicts on answer spans: sentences of different documents that both answer the question
but give different answers ("headquartered in Lyon" / "headquartered in Turin").

Run by the engine after the judgement stage, when the number/date check
(`citadel.answering.conflicts.check_conflicts`) found nothing. Two answering sentences from
different documents, about the same focus (the question words each matched overlap by at
least half, they state the same names, numbers and dates of the question, and their scope
words — "EU", "Australia" — do not exclude each other), conflict when

* their answer spans are of the same type and do not agree (and neither sentence also
  states the other's: that one describes two cases), or
* they are the same statement (most content words shared) and differ in a typed span: one
  states a name, date or number where the other states another.

Spans agree as `answer_norm` compares answers: values by `citadel.text.values` ("thirty
days" = "30 days" = "a month", "£1,500" = "1,500 pounds"), words with case, punctuation
and filler aside, a span that contains the other agreeing with it ("Lyon, France" /
"Lyon"). The conflict is then resolved by the same rule as every other
(`conflicts.resolve`: follow a clearly more authoritative side and say so, else flag).
"""

from __future__ import annotations

import re

from citadel.answering.answer_norm import answers_relation, states
from citadel.answering.conflicts import DEFAULT_AUTHORITY_GAP, resolve, surface
from citadel.answering.facts import scope_terms
from citadel.records import Conflict, ConflictSide, Context, Judgement, SentenceJudgement
from citadel.text.terms import content_terms, tokens

MIN_FOCUS_OVERLAP = 0.5
SAME_STATEMENT = 0.6  # Jaccard of content words: "the same sentence with one value changed"
KIND_NOUN = {"PERSON": "person", "NORP": "group", "FAC": "place", "ORG": "organisation",
              "GPE": "place", "LOC": "place", "DATE": "date", "TIME": "time",
              "MONEY": "amount", "PERCENT": "percentage", "QUANTITY": "quantity",
              "CARDINAL": "number", "ORDINAL": "rank", "NOUN": "answer"}


def spans_agree(a: str, b: str) -> bool:
    """The same answer, or no evidence of a different one: `answer_norm.answers_relation`
    is anything but a conflict (equal values, "two weeks" / "14 days"; one span's words
    within the other's, "Lyon, France" / "Lyon"; spans of different kinds)."""
    return answers_relation(a, b) != "conflict"


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


# "Orders outside the UK and EU are shipped from Leeds" is about the other orders.
_EXCLUDING = re.compile(r"\b(?:outside|except|excluding|other than|apart from|besides)\b", re.I)


def _scope(s: SentenceJudgement) -> set[str]:
    """Capitalised words that narrow what the sentence is about ("EU", "Australia"), other
    than its candidate answers (the reader's too: a name the tagger does not know, such as
    "Rotterdam", is an answer, not a scope) and its first word (`facts.scope_terms`)."""
    values = {w for v in (*s.candidates, s.span_text or "", s.answer_text or "")
              for w in tokens(v)}
    return {w.lower() for w in scope_terms(s.text, 0, 0)} - values


def same_focus(a: SentenceJudgement, b: SentenceJudgement, entities: set[str]) -> bool:
    """Both sentences state what the question asks about: the focus words each matched
    overlap by at least half, they state the same names of the question ("EU delivery" is
    not "delivery to Norway"), and neither speaks of the complement of the other's case."""
    ma, mb = set(a.matched), set(b.matched)
    if ma & entities != mb & entities:
        return False
    sa, sb = _scope(a), _scope(b)
    if sa and sb and not sa & sb:
        return False  # "EU delivery ..." and "Delivery to Australia ...": two cases
    if bool(_EXCLUDING.search(a.text)) != bool(_EXCLUDING.search(b.text)):
        return False
    return bool(ma & mb) and len(ma & mb) >= MIN_FOCUS_OVERLAP * len(ma | mb)


def _same_statement(a: SentenceJudgement, b: SentenceJudgement) -> bool:
    return a.document_id != b.document_id and _jaccard(
        set(content_terms(a.text)), set(content_terms(b.text))) >= SAME_STATEMENT


def _disputed(a: SentenceJudgement, b: SentenceJudgement) -> tuple[str, str] | None:
    """The two values on which `a` and `b` disagree, if they do."""
    if a.span_text and b.span_text and a.span and b.span and a.span.kind == b.span.kind:
        relation = answers_relation(a.span_text, b.span_text)
        if (relation in ("agree", "compatible") or states(a.text, b.span_text)
                or states(b.text, a.span_text)):
            return None  # the same answer, or one sentence also states the other's
        # Values of kinds that do not compare ("1206" / "two-week") dispute nothing, unless
        # the two sentences make the same statement with that one value changed.
        if relation == "unrelated" and not _same_statement(a, b):
            return None
        return a.span_text, b.span_text
    if _jaccard(set(content_terms(a.text)), set(content_terms(b.text))) < SAME_STATEMENT:
        return None
    only_a = [v for v in a.candidates if not any(spans_agree(v, w) for w in b.candidates)]
    only_b = [w for w in b.candidates if not any(spans_agree(v, w) for v in a.candidates)]
    if only_a and only_b:
        first_a = a.span_text if a.span_text in only_a else only_a[0]
        first_b = b.span_text if b.span_text in only_b else only_b[0]
        return first_a, first_b
    return None


def span_conflict(
    judgement: Judgement, context: Context, *, authority_gap: float = DEFAULT_AUTHORITY_GAP
) -> Conflict | None:
    """The strongest disagreement between answering sentences of different documents."""
    answering = [s for s in judgement.answering if s.candidates or s.span_text]
    if not answering:
        return None
    # A sentence of another document that makes the same statement as an answering one,
    # with another value, answers the same question: it is a side too.
    sides = answering + [s for s in judgement.sentences if not s.answers and s.candidates
                         and any(_same_statement(s, a) for a in answering)]
    blocks = {b.label: b for b in context.blocks}
    entities = set(judgement.question.entities)
    for anchor in answering:
        rivals: dict[str, tuple[SentenceJudgement, str, str]] = {}
        for other in sides:
            if other.document_id == anchor.document_id or other.document_id in rivals:
                continue
            if not same_focus(anchor, other, entities):
                continue
            disputed = _disputed(anchor, other)
            if disputed is not None:
                rivals[other.document_id] = (other, *disputed)
        if not rivals:
            continue
        anchor_value = next(iter(rivals.values()))[1]
        found = [sentence_side(anchor, anchor_value, blocks)]
        found += [sentence_side(other, value, blocks) for other, _, value in rivals.values()]

        def same(x: ConflictSide, y: ConflictSide) -> bool:  # the same answer, said again
            return answers_relation(x.value, y.value) in ("agree", "compatible")

        def attribute(lead: ConflictSide, others: list[ConflictSide],
                      anchor: SentenceJudgement = anchor) -> str:
            kind = anchor.span.kind if anchor.span else "NOUN"
            words = surface(lead.quote, set(anchor.matched)) or "the answer"
            return f"{words} ({KIND_NOUN.get(kind, 'answer')})"

        return resolve(found, same, attribute, authority_gap)
    return None


def sentence_side(s: SentenceJudgement, value: str, blocks: dict) -> ConflictSide:
    chunk = blocks[s.label].chunk
    return ConflictSide(label=s.label, chunk_id=s.chunk_id, document_id=s.document_id,
                        title=chunk.title, value=value, quote=s.text, authority=chunk.authority,
                        effective_date=chunk.effective_date)
