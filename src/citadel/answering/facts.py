"""Comparable facts: the values a sentence states, tied to the words around them.

A `Fact` is one value of one kind in one sentence. The values and how two of them compare
are `citadel.text.values`'s (durations in days, amounts per currency, quantities in their
base unit, clock times, opening hours, weekdays, percentages, dates; ranges agree with what
they hold); this module adds two kinds of its own:

| kind    | examples                                     | compared as                      |
|---------|----------------------------------------------|----------------------------------|
| `place` | warehouse in Leeds, our Rotterdam warehouse  | name, per kind of facility       |
| `count` | 3 gift cards, two parcels                    | number, per counted noun         |

(a bare number states nothing comparable by itself: it is a fact only as a count).

Each fact records its *subject* (the sentence's leading content words plus the words right
around the value: what the value quantifies) and its *scope* (capitalised words such as
"EU" or "Norway" that narrow what the sentence is about). `citadel.answering.conflicts` compares
facts across documents with these; nothing here knows about questions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from citadel.text.terms import STOPWORDS, stem
from citadel.text.values import (
    FILLER,
    MONTHS,
    WEEKDAYS,
    Value,
    compare,
    find_values,
    hedged_start,
    is_number_word,
)
from citadel.text.values import UNIT_WORDS as _VALUE_UNITS

_FACILITY = (r"(?P<noun>warehouse|depot|returns\s+cent(?:re|er)|distribution\s+cent(?:re|er)|"
             r"fulfil?ment\s+cent(?:re|er)|office|store|shop)")
_NAME = r"(?P<name>[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)?)"
_PLACE_AFTER = re.compile(rf"\b{_FACILITY}\s+(?:in|at|near)\s+{_NAME}")
_PLACE_BEFORE = re.compile(
    rf"\b(?:our|the|its|their)\s+{_NAME}\s+{_FACILITY}\b"
)
_COUNTED = re.compile(r"\s+(?P<noun>[a-z]{3,})\b")  # the noun a number counts
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?|\d+(?:[.,]\d+)*", re.UNICODE)

# Words a value is stated in rather than about: units and currencies, and the qualifiers of
# a duration. A question's terms leave them out (`conflicts.question_terms`).
UNIT_WORDS = frozenset({*_VALUE_UNITS, *(stem(w) for w in _VALUE_UNITS), "business",
                        "working", "calendar"})
_CALENDAR = frozenset({*MONTHS, *WEEKDAYS, *(m[:3] for m in MONTHS), "sept"})
# Words that sit between a value and what it quantifies without saying what that is.
_FILLER = frozenset({*FILLER, *UNIT_WORDS, *_CALENDAR, *(stem(w) for w in _CALENDAR),
                     "next", "same", "st", "nd", "rd", "th"})
_NOT_COUNTED = STOPWORDS | _FILLER


@dataclass(frozen=True)
class Fact:
    kind: str                  # a value's kind (`citadel.text.values`), `place` or `count`
    unit: str                  # what makes two values comparable: currency, facility, noun
    text: str                  # the value as written: "within 30 days"
    start: int                 # offsets of the value in `sentence`
    end: int
    sentence: str
    subject: frozenset[str]    # stems: the sentence's head + the words around the value
    scope: frozenset[str]      # capitalised words (other than the value) narrowing the topic
    lead: str = ""             # the word right before the value: "until", "from", "within"
    reading: Value | None = None  # the value read; None for a place
    name: str = ""             # a place's name, lower case

    @property
    def value(self) -> str:
        return self.text


def _words(text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group()) for m in _WORD.finditer(text)]


def _content(word: str) -> str | None:
    w = word.lower()
    if w in STOPWORDS or w[0].isdigit() or is_number_word(w):
        return None
    s = stem(w)
    return None if s in _FILLER or w in _FILLER else s


def subject_terms(sentence: str, start: int, end: int, head: int = 2, before: int = 3,
                  after: int = 2) -> frozenset[str]:
    """The sentence's first `head` content words plus the `before` content words preceding
    the value and the `after` words following it: what the value is about."""
    words = [(s, e, t) for s, e, t in ((s, e, _content(w)) for s, e, w in _words(sentence))
             if t is not None]
    heads = [t for _, _, t in words[:head]]
    left = [t for s, e, t in words if e <= start][-before:]
    right = [t for s, e, t in words if s >= end][:after]
    return frozenset(heads + left + right)


def lead_word(sentence: str, start: int) -> str:
    """The word right before offset `start`, lower case ("until" in "returned until 31 ...")."""
    before = [w for s, e, w in _words(sentence) if e <= start]
    return before[-1].lower() if before else ""


def scope_terms(sentence: str, start: int, end: int) -> frozenset[str]:
    """Capitalised words other than the value: "EU", "Norway", "UK". The first word counts
    only in capitals ("UK standard delivery"), since every sentence starts with a capital."""
    out: set[str] = set()
    for i, (s, e, w) in enumerate(_words(sentence)):
        if (s < end and e > start) or not w[0].isupper() or (i == 0 and not w.isupper()):
            continue
        if w.lower() in STOPWORDS or w.lower() in _CALENDAR:
            continue
        out.add(w.lower())
    return frozenset(out)


def extract_facts(sentence: str) -> list[Fact]:
    """Every comparable value in one sentence, in order of position."""
    found: list[tuple[str, str, int, int, Value | None, str]] = []
    for v in find_values(sentence):
        if v.kind != "number":
            start = hedged_start(sentence, v.start) if v.kind == "duration" else v.start
            found.append((v.kind, v.unit, start, v.end, v, ""))
            continue
        counted = _COUNTED.match(sentence, v.end)
        if counted and counted.group("noun") not in _NOT_COUNTED:
            found.append(("count", stem(counted.group("noun")), v.start, counted.end(), v, ""))
    taken = [(s, e) for _, _, s, e, _, _ in found]
    places = [(m, m.group("noun")) for m in _PLACE_AFTER.finditer(sentence)]
    places += [(m, m.group("noun")) for m in _PLACE_BEFORE.finditer(sentence)
               if not _PLACE_AFTER.match(sentence, m.start("noun"))]
    for m, noun in places:
        s, e = m.start("name"), m.end("name")
        if all(e <= a or s >= b for a, b in taken):
            found.append(("place", _facility(noun), s, e, None, m.group("name").lower()))
    facts = [
        Fact(kind=kind, unit=unit, text=sentence[s:e], start=s, end=e, sentence=sentence,
             subject=subject_terms(sentence, s, e), scope=scope_terms(sentence, s, e),
             lead=lead_word(sentence, s), reading=reading, name=name)
        for kind, unit, s, e, reading, name in found
    ]
    return sorted(facts, key=lambda f: f.start)


def _facility(noun: str) -> str:
    noun = re.sub(r"\s+", " ", noun.lower())
    return "warehouse" if noun in {"warehouse", "depot"} or "cent" in noun else noun


def comparable(a: Fact, b: Fact) -> bool:
    """Same kind and unit (a £ price is never compared with a € price)."""
    return a.kind == b.kind and a.unit == b.unit


def agree(a: Fact, b: Fact) -> bool:
    """Whether two comparable facts state the same value: `citadel.text.values.compare`
    says equal (ranges that overlap agree; 24 months and 2 years agree); places by name."""
    if a.reading is None or b.reading is None:
        return a.reading is None and b.reading is None and a.name == b.name
    return compare(a.reading, b.reading) == "equal"
