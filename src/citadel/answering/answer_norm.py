"""Answer normalisation: are two answers the same, compatible, or in conflict?

Used by `reader_conflicts` to compare the evidence reader's answer spans across documents.
An answer span is read as one of three kinds:

* `date`: a year, a month and year, a day and month with or without a year, in the common
  written forms ("12 March 1998", "March 12, 1998", "1998-03-12", "12/03/1998", "March
  1998", "1998"). Compared field by field: a missing field matches any ("in 1998" is
  compatible with "in March 1998", never in conflict with it).
* `number`: a number, in digits or words, with an optional unit ("30 days", "thirty days",
  "5 km", "five kilometres", "$20", "20 dollars", "1.5 million", "15%"). Durations are
  compared in days; other units must be the same unit. Two numbers with different units of
  different dimensions are not the same kind of answer.
* `text`: anything else (names, places, organisations), as lower-case words without
  punctuation, articles or prepositions, number words as digits; the words before a comma
  are its head ("Lyon, France" answers like "Lyon"). One answer's words all within the
  other's is the more specific answer, not a different one ("Leeds" / "the Leeds warehouse").

The tagger's type, when both answers carry one, must match for text answers ("Lyon" and
"Jean Dupont" are not answers to the same question); a span the tagger did not type
(`ANSWER`: Rotterdam, a small brand) is comparable with any text answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Relation = Literal["agree", "compatible", "conflict", "unrelated"]
Date = tuple[int | None, int | None, int | None]  # year, month, day

_MONTHS = {"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8,
           "sep": 9, "oct": 10, "nov": 11, "dec": 12}
_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
          r"sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(\d{3,4})(?:\s*(?:ad|ce))?"
# Each form: pattern, and which groups hold (year, month, day).
_DATE_FORMS: tuple[tuple[re.Pattern[str], tuple[int | None, int | None, int | None]], ...] = (
    (re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})$"), (1, 2, 3)),
    (re.compile(rf"^{_DAY}\s+(?:of\s+)?({_MONTH})(?:,?\s+{_YEAR})?$"), (3, 2, 1)),
    (re.compile(rf"^({_MONTH})\s+{_DAY}(?:,?\s+{_YEAR})?$"), (3, 1, 2)),
    (re.compile(rf"^({_MONTH}),?\s+{_YEAR}$"), (2, 1, None)),
    (re.compile(rf"^{_YEAR}$"), (1, None, None)),
)
_NUMERIC_DATE = re.compile(r"^(\d{1,2})[/.](\d{1,2})[/.](\d{4})$")

_NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "a": 1, "an": 1,
    "dozen": 12,
}
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6,
             "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10}
_SCALES = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
# unit word -> (canonical unit, factor to it). Durations share one unit so that "2 weeks"
# and "14 days" agree.
_UNITS: dict[str, tuple[str, float]] = {
    **{w: ("day", f) for ws, f in ((("minute", "minutes", "min", "mins"), 1 / 1440),
                                   (("hour", "hours", "hr", "hrs", "h"), 1 / 24),
                                   (("day", "days"), 1.0), (("week", "weeks"), 7.0),
                                   (("month", "months"), 30.0), (("year", "years"), 365.0))
       for w in ws},
    **{w: ("m", f) for ws, f in ((("km", "kilometre", "kilometres", "kilometer",
                                   "kilometers"), 1000.0),
                                  (("m", "metre", "metres", "meter", "meters"), 1.0),
                                  (("cm", "centimetre", "centimetres", "centimeter",
                                    "centimeters"), 0.01))
       for w in ws},
    **{w: ("mile", 1.0) for w in ("mi", "mile", "miles")},
    **{w: ("kg", f) for ws, f in ((("kg", "kilogram", "kilograms", "kilo", "kilos"), 1.0),
                                   (("g", "gram", "grams"), 0.001),
                                   (("tonne", "tonnes", "ton", "tons"), 1000.0))
       for w in ws},
    **{w: ("percent", 1.0) for w in ("%", "percent", "per cent", "pc")},
    **{w: ("usd", 1.0) for w in ("$", "usd", "dollar", "dollars")},
    **{w: ("gbp", 1.0) for w in ("£", "gbp", "pound", "pounds")},
    **{w: ("eur", 1.0) for w in ("€", "eur", "euro", "euros")},
}
# Words that hedge or place an answer without changing it ("about 30 days", "in Leeds").
_FILLER = frozenset({"a", "an", "the", "of", "in", "on", "at", "to", "by", "from", "for",
                     "about", "around", "approximately", "roughly", "some", "nearly",
                     "almost", "over", "circa", "c", "ca", "and", "its", "their", "his",
                     "her", "our"})
_TOKEN = re.compile(r"[$£€%]|\d+(?:[.,]\d+)*|[^\W\d_]+(?:'[^\W\d_]+)?", re.UNICODE)
_TEXT_KINDS = {"PERSON": "person", "NORP": "group", "ORG": "organisation", "GPE": "place",
               "LOC": "place", "FAC": "place", "PRODUCT": "thing", "EVENT": "event",
               "WORK_OF_ART": "work", "LAW": "law", "LANGUAGE": "language"}


@dataclass(frozen=True)
class NormalAnswer:
    """One answer span, read for comparison."""

    text: str
    kind: Literal["date", "number", "text"]
    words: tuple[str, ...] = ()
    head: tuple[str, ...] = ()
    dates: tuple[Date, ...] = ()
    value: float | None = None
    unit: str | None = None
    tag: str | None = None  # the tagger's class of a text answer ("place"), None: untyped


def _number(word: str) -> float | None:
    if word in _NUMBER_WORDS:
        return float(_NUMBER_WORDS[word])
    if word in _ORDINALS:
        return float(_ORDINALS[word])
    m = re.fullmatch(r"(\d+(?:,\d{3})*(?:\.\d+)?)(?:st|nd|rd|th)?", word)
    return float(m.group(1).replace(",", "")) if m else None


def words_of(text: str) -> tuple[str, ...]:
    """Lower-case words without punctuation or filler, numbers as digits ("Thirty" -> "30",
    "1,000" -> "1000", "3rd" -> "3")."""
    out = []
    for w in _TOKEN.findall(text.lower()):
        if w in _FILLER:
            continue
        n = _number(w) if (w[:1].isdigit() or w in _NUMBER_WORDS or w in _ORDINALS) else None
        out.append(f"{n:g}" if n is not None else w)
    return tuple(out)


def _dates(text: str) -> tuple[Date, ...]:
    """Every reading of `text` as a date ("03/04/1998" is read both ways), none if it is
    not only a date."""
    t = re.sub(r"^(?:in|on|by|around|about|circa|c\.)\s+", "", text.lower().strip(" .,;"))
    t = re.sub(r"\s+", " ", t)
    m = _NUMERIC_DATE.match(t)
    if m:
        a, b, y = int(m.group(1)), int(m.group(2)), int(m.group(3))
        readings = [(y, b, a)] if a <= 31 and b <= 12 else []
        readings += [(y, a, b)] if a <= 12 and b <= 31 and a != b else []
        return tuple(readings)
    for pattern, (gy, gm, gd) in _DATE_FORMS:
        m = pattern.match(t)
        if not m:
            continue
        year = int(m.group(gy)) if gy and m.group(gy) else None
        month_text = m.group(gm) if gm else None
        month = (int(month_text) if month_text and month_text.isdigit()
                 else _MONTHS.get(month_text[:3]) if month_text else None)
        day = int(m.group(gd)) if gd else None
        if (month is not None and not 1 <= month <= 12) or (day is not None
                                                             and not 1 <= day <= 31):
            return ()
        if gy and gm is None and gd is None and not (1000 <= (year or 0) <= 2999):
            return ()  # a bare number is a year only when it looks like one
        return ((year, month, day),)
    return ()


def _quantity(text: str) -> tuple[float, str | None] | None:
    """(value in its canonical unit, unit) when `text` is a number with at most a unit and
    a scale word ("1.5 million", "$20", "five kilometres", "15%"); None otherwise."""
    tokens = [w for w in _TOKEN.findall(text.lower()) if w not in _FILLER or w in ("a", "an")]
    tokens = [w for w in tokens if w not in ("a", "an")] or tokens
    value: float | None = None
    unit: str | None = None
    factor = 1.0
    for w in tokens:
        n = _number(w)
        if n is not None and value is None:
            value = n
        elif w in _SCALES and value is not None:
            value *= _SCALES[w]
        elif w in _UNITS and unit is None:
            unit, factor = _UNITS[w]
        else:
            return None
    if value is None:
        return None
    return value * factor, unit


def normalise(text: str, tag: str | None = None) -> NormalAnswer | None:
    """`text` read as a date, a number or words; None when nothing is left to compare.
    `tag`: the tagger's type of the span (spaCy's labels; `ANSWER` or None: untyped)."""
    if not text or not text.strip():
        return None
    dates = _dates(text)
    if dates:
        return NormalAnswer(text, "date", words_of(text), dates=dates)
    quantity = _quantity(text)
    if quantity is not None:
        return NormalAnswer(text, "number", words_of(text), value=quantity[0],
                            unit=quantity[1])
    words = words_of(text)
    if not words:
        return None
    head = words_of(text.split(",", 1)[0]) or words
    return NormalAnswer(text, "text", words, head=head, tag=_TEXT_KINDS.get(tag or ""))


def _date_relation(a: Date, b: Date) -> Relation:
    shared = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
    if not shared:
        return "unrelated"  # "March" and "1998": nothing in common to compare
    if any(x != y for x, y in shared):
        return "conflict"
    return "agree" if all((x is None) == (y is None) for x, y in zip(a, b, strict=True)) \
        else "compatible"


_ORDER: dict[Relation, int] = {"agree": 0, "compatible": 1, "unrelated": 2, "conflict": 3}


def relation(a: NormalAnswer, b: NormalAnswer) -> Relation:
    """How two answers to one question stand: the same (`agree`), one more specific than
    the other (`compatible`), different answers of the same kind (`conflict`), or not
    comparable (`unrelated`: a date and a name, metres and dollars)."""
    if a.kind != b.kind:
        return "unrelated"
    if a.kind == "date":
        # Of every pair of readings, the most agreeable: ambiguity never makes a conflict.
        return min((_date_relation(x, y) for x in a.dates for y in b.dates),
                   key=_ORDER.__getitem__)
    if a.kind == "number":
        if a.unit is not None and b.unit is not None and a.unit != b.unit:
            return "unrelated"
        assert a.value is not None and b.value is not None
        if abs(a.value - b.value) <= 1e-6 * max(abs(a.value), abs(b.value), 1.0):
            return "agree" if a.unit == b.unit else "compatible"
        return "conflict"
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
