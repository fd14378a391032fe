"""Answer normalisation: are two answers the same, compatible, or in conflict?

Used by every check that compares answer spans across documents (`span_conflicts`,
`reader_conflicts`). An answer span is read as one of two kinds:

* a **value** (`citadel.text.values.read_value`): a number, amount, quantity, duration,
  clock time, opening hours, weekdays, percentage or date, with only hedging or placing
  words around it ("about 30 days", "in 1998", "from 9am to 5pm"). Two values are compared
  by `citadel.text.values.compare`, the one comparison the conflict check uses too: "two
  weeks" = "14 days", "£1,500" = "1,500 pounds", "9am to 5pm" = "09:00–17:00". A date
  that states fewer fields than the other and matches it is compatible ("in 1998" / "in
  March 1998"), never in conflict.
* **text** (names, places, organisations): lower-case words without punctuation or filler
  (`citadel.text.values.FILLER`), numbers in words as digits; the words before a comma are
  its head ("Lyon, France" answers like "Lyon"). One answer's words all within the other's
  is the more specific answer, not a different one ("Leeds" / "the Leeds warehouse").

The tagger's type, when both answers carry one, must match for text answers ("Lyon" and
"Jean Dupont" are not answers to the same question); a span the tagger did not type
(`ANSWER`: Rotterdam, a small brand) is comparable with any text answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from citadel.text import values
from citadel.text.values import FILLER, Value, compare, read_value, with_digits

Relation = Literal["agree", "compatible", "conflict", "unrelated"]

_TOKEN = re.compile(r"[$£€%]|\d+(?:[.,]\d+)*(?:st|nd|rd|th)?|[^\W\d_]+(?:'[^\W\d_]+)?",
                    re.UNICODE)
_ORDINAL_DIGITS = re.compile(r"(\d+(?:,\d{3})*(?:\.\d+)?)(?:st|nd|rd|th)?")
_TEXT_KINDS = {"PERSON": "person", "NORP": "group", "ORG": "organisation", "GPE": "place",
               "LOC": "place", "FAC": "place", "PRODUCT": "thing", "EVENT": "event",
               "WORK_OF_ART": "work", "LAW": "law", "LANGUAGE": "language"}


@dataclass(frozen=True)
class NormalAnswer:
    """One answer span, read for comparison."""

    text: str
    kind: Literal["value", "text"]
    words: tuple[str, ...] = ()
    head: tuple[str, ...] = ()
    value: Value | None = None  # a value answer's value
    tag: str | None = None  # the tagger's class of a text answer ("place"), None: untyped


@lru_cache(maxsize=8192)
def words_of(text: str) -> tuple[str, ...]:
    """Lower-case words without punctuation or filler, numbers as digits ("Thirty" -> "30",
    "1,000" -> "1000", "3rd" -> "3")."""
    out = []
    for w in _TOKEN.findall(with_digits(text).lower()):
        if w in FILLER:
            continue
        number = _ORDINAL_DIGITS.fullmatch(w)
        out.append(f"{float(number.group(1).replace(',', '')):g}" if number else w)
    return tuple(out)


@lru_cache(maxsize=8192)  # every pair of spans of an answer reads each span again
def normalise(text: str, tag: str | None = None) -> NormalAnswer | None:
    """`text` read as a value or as words; None when nothing is left to compare.
    `tag`: the tagger's type of the span (spaCy's labels; `ANSWER` or None: untyped)."""
    if not text or not text.strip():
        return None
    value = read_value(text)
    if value is not None:
        return NormalAnswer(text, "value", words_of(text), value=value)
    words = words_of(text)
    if not words:
        return None
    head = words_of(text.split(",", 1)[0]) or words
    return NormalAnswer(text, "text", words, head=head, tag=_TEXT_KINDS.get(tag or ""))


def relation(a: NormalAnswer, b: NormalAnswer) -> Relation:
    """How two answers to one question stand: the same (`agree`), one more specific than
    the other (`compatible`), different answers of the same kind (`conflict`), or not
    comparable (`unrelated`: a date and a name, metres and dollars)."""
    if a.value is not None and b.value is not None:
        verdict = compare(a.value, b.value)
        if verdict == "different":
            return "conflict"
        if verdict == "incomparable":
            return "unrelated"
        return "agree" if a.value.precision == b.value.precision else "compatible"
    if a.kind != b.kind:
        return "unrelated"
    if a.tag and b.tag and a.tag != b.tag:
        return "unrelated"
    if a.words == b.words or a.head == b.head:
        return "agree"
    wa, wb = set(a.words), set(b.words)
    if wa <= wb or wb <= wa or set(a.head) <= wb or set(b.head) <= wa:
        return "compatible"
    return "conflict"


def answers_relation(a: str, b: str, tag_a: str | None = None, tag_b: str | None = None
                     ) -> Relation:
    """`relation` of two answer texts; nothing to compare is `unrelated`."""
    na, nb = normalise(a, tag_a), normalise(b, tag_b)
    if na is None or nb is None:
        return "unrelated"
    return relation(na, nb)


def states(text: str, answer: str | NormalAnswer) -> bool:
    """Whether `text` (a sentence) also states `answer`: a value equal to it among its
    values, or every word of the answer among its words. A sentence that states both sides
    of a disagreement describes two cases ("UK orders ship from Leeds, EU orders from
    Utrecht") and contradicts neither. Every word, not the head alone: "the Duke of
    Brittany" does not state "the Duke of Normandy" for sharing "Duke"."""
    normal = normalise(answer) if isinstance(answer, str) else answer
    if normal is None:
        return False
    if normal.value is not None:
        return values.states(text, normal.value)
    return bool(normal.words) and set(normal.words) <= set(words_of(text))
