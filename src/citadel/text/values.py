"""The values a text states, and whether two of them are the same.

The one reading of values behind every comparison Citadel makes: the conflict check's facts
(`answering.facts`), the answer-span checks (`answering.answer_norm`, `span_conflicts`,
`reader_conflicts`). A `Value` is one value of one kind:

| kind       | examples                                                  | compared as       |
|------------|-----------------------------------------------------------|-------------------|
| `number`   | 1,500; 2.5; fifteen hundred; one hundred and fifty        | the number        |
| `money`    | £1,500, 1,500 pounds, GBP 1500, $50, fifty dollars, 99p   | per currency      |
| `percent`  | 20%, 20 percent, twenty per cent                          | the number        |
| `quantity` | 5 km, five kilometres, 5,000 m; 1.9 kg, 1,900 g; 2 l      | in its base unit  |
| `duration` | two weeks, 14 days, 48 hours, 2-year, 24-month, a day,    | days              |
|            | 3–5 business days, next business day                      |                   |
| `time`     | 9am, 9 a.m., 09:00, 5:30pm, 17:30, noon                   | minutes after 0:00 |
| `hours`    | 9am to 5pm, 09:00–17:00, 9-5pm, between 9am and 5pm       | (opening, closing) |
| `weekdays` | Monday to Friday, Mon–Fri, weekdays, weekends, Sundays    | the set of days   |
| `date`     | 1 April 2024, April 1, 2024, 2024-04-01, 01/04/2024,      | (year, month, day) |
|            | March 1998                                                |                   |

`compare` says how two values stand: `equal`, `different`, or `incomparable` (different kinds
or units: "$50" and "50", a price in £ and one in €, km and miles), so that a caller can tell
"the sources disagree" from "these cannot be compared".

* Numbers in words are read by text2num (`find_numbers`), in digits with thousands separators
  and decimals; "1.5 million" is 1,500,000.
* A range ("3–5 days") agrees with every value it holds: two numeric values are equal when
  their ranges overlap ("5–8 days" and "7 days"). Opening hours and weekday sets are equal
  only when exactly the same.
* Durations are compared in days: a week is 7, a month 365.25 / 12 and a year 365.25, so
  "24 months" is exactly "2 years". A length in months or years is a calendar length, not a
  count of days: against days or weeks it is equal within a day a month ("30 days" and "one
  month", "365 days" and "a year"; "4 weeks" is not a month).
* A date may lack its year, day or month; fields both state must match, and a field only one
  states is no disagreement. "01/04/2024" is read both ways (1 April or 4 January) unless one
  reading is impossible; any matching reading makes it equal (ambiguity never disagrees).
* Metric and imperial units are not converted into each other: a written conversion is
  rounded ("3 miles (5 km)"), so comparing them would invent disagreements.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from text_to_num import find_numbers, text2num

Kind = Literal["number", "money", "percent", "quantity", "duration", "time", "hours",
               "weekdays", "date"]
Relation = Literal["equal", "different", "incomparable"]
Date = tuple[int | None, int | None, int | None]  # year, month, day; None: not stated

# The month and weekday names. Kept here rather than taken from `calendar`, whose names follow
# the process's locale (a German LC_TIME would make "March" unreadable).
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
          "september", "october", "november", "december")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")

# Words before a value that hedge it without changing it ("within 30 days", "about a day").
HEDGES = ("about", "around", "approximately", "roughly", "nearly", "almost", "circa", "up to",
          "within", "under", "over", "less than", "more than", "at least", "at most")
# Words that hedge, place or introduce a value without changing it ("from 9am to 5pm", "in
# 1998", "at least £50"): a span of these and one value is that value.
FILLER = frozenset({
    "a", "an", "the", "of", "in", "on", "at", "to", "by", "from", "for", "and", "until",
    "till", "between", "some", "c", "ca", "just", "only", "exactly", "its", "their", "his",
    "her", "our",
    *(w for hedge in HEDGES for w in hedge.split()),
})

# Currencies: ISO code -> (symbols, words, words for a hundredth). "$" and "dollars" are
# read as US dollars, "cents" as US cents.
_CURRENCIES: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "gbp": (("£",), ("pound", "pounds", "quid", "sterling"), ("p", "pence", "penny")),
    "eur": (("€",), ("euro", "euros"), ()),
    "usd": (("$", "US$"), ("dollar", "dollars"), ("cent", "cents")),
}

# Units: written form -> (base unit, factor to it). Words match in any case and take an "s";
# abbreviations match only as written ("4G" is no 4 grams). The base unit is what makes two
# quantities comparable: "day" (durations), "m", "ft" (imperial lengths), "kg", "lb", "l".
_UNIT_TABLE: tuple[tuple[str, float, tuple[str, ...], tuple[str, ...]], ...] = (
    # base, factor, words, abbreviations
    ("day", 1 / 86400, ("second",), ("sec", "secs")),
    ("day", 1 / 1440, ("minute",), ("min", "mins")),
    ("day", 1 / 24, ("hour",), ("hr", "hrs")),
    ("day", 1.0, ("day",), ()),
    ("day", 7.0, ("week",), ()),
    ("day", 14.0, ("fortnight",), ()),
    ("day", 365.25 / 12, ("month",), ()),
    ("day", 365.25, ("year",), ("yr", "yrs")),
    ("m", 0.001, ("millimetre", "millimeter"), ("mm",)),
    ("m", 0.01, ("centimetre", "centimeter"), ("cm",)),
    ("m", 1.0, ("metre", "meter"), ("m",)),
    ("m", 1000.0, ("kilometre", "kilometer"), ("km", "kms")),
    ("ft", 1 / 12, ("inch", "inches"), ()),
    ("ft", 1.0, ("foot", "feet"), ("ft",)),
    ("ft", 3.0, ("yard",), ("yd", "yds")),
    ("ft", 5280.0, ("mile",), ("mi",)),
    ("kg", 1e-6, ("milligram",), ("mg",)),
    ("kg", 0.001, ("gram", "gramme"), ("g",)),
    ("kg", 1.0, ("kilogram", "kilo"), ("kg", "kgs")),
    ("kg", 1000.0, ("tonne",), ()),
    ("lb", 1 / 16, ("ounce",), ("oz",)),
    ("lb", 1.0, (), ("lb", "lbs")),
    ("l", 0.001, ("millilitre", "milliliter"), ("ml",)),
    ("l", 1.0, ("litre", "liter"), ("l", "L")),
)
_CALENDAR_UNITS = frozenset({"month", "months", "year", "years", "yr", "yrs"})
# A calendar length (months, years) against days or weeks: equal within a day a month.
_CALENDAR_SLACK = 1 / 30


def _plural(word: str) -> str:
    return word if word.endswith(("s", "foot", "feet")) else word + "s"


def _unit_forms() -> dict[str, tuple[str, float]]:
    """Written form -> (base unit, factor to it): every word, its plural, every abbreviation."""
    forms: dict[str, tuple[str, float]] = {}
    for base, factor, words, abbreviations in _UNIT_TABLE:
        for form in (*words, *map(_plural, words), *abbreviations):
            forms[form] = (base, factor)
    return forms


_UNITS = _unit_forms()
_UNIT_WORDS_ANY_CASE = {w for _, _, words, _ in _UNIT_TABLE for w in (*words, *map(_plural, words))}
_SYMBOLS = {s: code for code, (symbols, _, _) in _CURRENCIES.items() for s in symbols}
_CURRENCY_WORDS = {w: (code, 1.0) for code, (_, words, _) in _CURRENCIES.items() for w in words}
_CURRENCY_WORDS |= {w: (code, 0.01) for code, (_, _, cents) in _CURRENCIES.items()
                    for w in cents}

# Every word that names a unit or a currency: what a value is counted in, not what it is about.
UNIT_WORDS = frozenset({*(w.lower() for w in _UNITS if len(w) > 2), *_CURRENCY_WORDS} - {"p"})


@dataclass(frozen=True, slots=True)
class Value:
    """One value as a text states it. Numeric kinds (and times, in minutes after midnight)
    hold `low`..`high` (one number: low == high); opening hours hold (opening, closing)."""

    kind: Kind
    unit: str                  # comparable only within one: "gbp", "m", "kg", "day", "%", ""
    text: str                  # as written
    start: int = 0             # offsets in the text it was read from
    end: int = 0
    low: float = 0.0
    high: float = 0.0
    dates: tuple[Date, ...] = ()        # every reading of a date
    days: frozenset[int] = frozenset()  # weekdays, 0 = Monday
    calendar: bool = False     # a duration in months or years

    @property
    def precision(self) -> frozenset[tuple[bool, ...]]:
        """Which fields each reading of a date states ((True, True, False): year and month)."""
        return frozenset(tuple(x is not None for x in d) for d in self.dates)


# --- numbers in words ---------------------------------------------------------------------

_TOKEN = re.compile(r"[^\W\d_]+|\d+|[^\w\s]")
_LETTERS = re.compile(r"[^\W\d_]+")
_DIGITS_BEFORE = re.compile(r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?\s*$")
_SCALE_WORDS = (100, 1e3, 1e6, 1e9, 1e12)


class _Token:
    """A word for text2num's `find_numbers`."""

    __slots__ = ("word",)

    def __init__(self, word: str) -> None:
        self.word = word

    def text(self) -> str:
        return self.word

    def nt_separated(self, previous: _Token) -> bool:
        return False

    def not_a_number_part(self) -> bool:
        return False


@lru_cache(maxsize=8192)
def is_number_word(word: str) -> bool:
    """Whether `word` alone is a number in words ("five", "Twenty", "million"; not "first",
    not "a")."""
    try:
        text2num(word.lower(), "en")
    except ValueError:
        return False
    return word.isalpha()


def _gap_start(text: str, m: re.Match[str]) -> int:
    """Where the white space before match `m` begins."""
    start = m.start()
    while start > 0 and text[start - 1].isspace():
        start -= 1
    return start


def _format(number: float) -> str:
    return str(int(number)) if number == int(number) else f"{number:f}".rstrip("0")


class _Digits:
    """`text` with its numbers in words written in digits, and the way back to the offsets
    of `text` ("two weeks" -> "2 weeks": offsets 0..1 of the new text are 0..3 of `text`)."""

    __slots__ = ("text", "_ends", "_starts")

    def __init__(self, text: str) -> None:
        self.text = text
        self._starts: list[int] | None = None
        self._ends: list[int] | None = None
        # text2num's scan costs tens of microseconds: only for a text with a number word.
        if not any(map(is_number_word, _LETTERS.findall(text))):
            return
        # text2num sees only the number words and what joins them ("and", "-"), each run of
        # them apart ("."): its cost is per word it is given.
        words: list[re.Match[str] | None] = []
        for m in _TOKEN.finditer(text):
            if is_number_word(m.group()) or m.group().lower() == "and" or m.group() == "-":
                if words and words[-1] is not None and words[-1].end() != _gap_start(text, m):
                    words.append(None)
                words.append(m)
        tokens = [_Token(w.group() if w is not None else ".") for w in words]
        pieces: list[tuple[int, int, str]] = []
        for o in find_numbers(tokens, "en", threshold=0):
            first, last = words[o.start], words[o.end - 1]
            if o.is_ordinal or first is None or last is None:
                continue  # "the first of April" is no quantity
            start, end, value = first.start(), last.end(), o.value
            before = _DIGITS_BEFORE.search(text, 0, start)
            if (o.end - o.start == 1 and value in _SCALE_WORDS and before
                    and not (pieces and pieces[-1][1] > before.start())):
                # A scale word after digits: "1.5 million" is 1,500,000.
                value *= float(before.group().replace(",", ""))
                start = before.start()
            pieces.append((start, end, _format(value)))
        if pieces:
            self._rewrite(pieces)

    def _rewrite(self, pieces: list[tuple[int, int, str]]) -> None:
        text, out, starts, ends, done = self.text, [], [], [], 0
        for start, end, digits in pieces:
            out += [text[done:start], digits]
            starts += [*range(done, start), *[start] * len(digits)]
            ends += [*range(done + 1, start + 1), *[end] * len(digits)]
            done = end
        out.append(text[done:])
        starts += range(done, len(text))
        ends += range(done + 1, len(text) + 1)
        self.text, self._starts, self._ends = "".join(out), starts, ends

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Offsets in the original text of the new text's `start`..`end`."""
        if self._starts is None or self._ends is None or start >= end:
            return start, end
        return self._starts[start], self._ends[end - 1]


def with_digits(text: str) -> str:
    """`text` with its numbers in words written in digits ("twenty-four months" -> "24
    months", "one hundred and fifty euros" -> "150 euros")."""
    return _Digits(text).text


# --- patterns, on the text with its numbers in digits -------------------------------------
# A unit or a currency word is matched as any word and looked up (a long alternation of
# words makes a pattern several times slower); a match whose word is neither reads as no
# value.

_NUM = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_NUM_END = r"(?![\d]|[.,]\d)"
_FREE = r"(?=\d)(?<![\w.,])"  # a number not inside another number or word
_MONTH = (r"(?:Jan(?:uary|\.)?|Feb(?:ruary|\.)?|Mar(?:ch|\.)?|Apr(?:il|\.)?|May|June?|July?|"
          r"Aug(?:ust|\.)?|Sep(?:tember|t\.?|\.)?|Oct(?:ober|\.)?|Nov(?:ember|\.)?|"
          r"Dec(?:ember|\.)?)(?![a-z])")
_DAY_NAME = r"(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day"
_ORDINAL = r"(?:st|nd|rd|th)?"
_DATE = re.compile(
    rf"(?=[\dA-Z])(?:\b(?P<iy>\d{{4}})-(?P<im>\d{{1,2}})-(?P<id>\d{{1,2}})\b"
    rf"|\b(?P<na>\d{{1,2}})[/.-](?P<nb>\d{{1,2}})[/.-](?P<ny>\d{{4}})\b"
    rf"|(?:\b{_DAY_NAME},?\s+(?:the\s+)?)?\b(?P<d1>\d{{1,2}}){_ORDINAL}\s+(?:of\s+)?"
    rf"(?P<m1>{_MONTH})(?![\w])(?:,?\s+(?P<y1>\d{{4}})\b)?"
    rf"|(?:\b{_DAY_NAME},?\s+)?\b(?P<m2>{_MONTH})\s+(?P<d2>\d{{1,2}}){_ORDINAL}(?![\w])"
    rf"(?:,?\s+(?P<y2>\d{{4}})\b)?"
    rf"|\b(?P<m3>{_MONTH}),?\s+(?P<y3>\d{{4}})\b)"
)


def _time(p: str) -> str:
    """A clock time; its groups are prefixed `p` (two of them make a range)."""
    return (rf"(?P<{p}h>\d{{1,2}})(?:[:.](?P<{p}m>\d{{2}}))?\s?"
            rf"(?:(?P<{p}ap>[aApP])\.\s?[mM]\.|(?P<{p}ap2>[aApP])\s?[mM]\b)"
            rf"|(?P<{p}h24>\d{{1,2}}):(?P<{p}m24>\d{{2}})(?!\d)"
            rf"|(?:12\s+)?(?P<{p}noon>(?i:noon|midday|midnight))\b")


_TIME = re.compile(rf"(?=[\dnNmM])(?<![\w.,:])(?:{_time('a')})")
_HOURS = re.compile(
    rf"(?=[\dnNmM])(?<![\w.,:])(?:{_time('a')}|(?P<abare>\d{{1,2}})(?![\d:.]))"
    rf"\s*(?:-|–|—|(?i:to|until|till|through|and))\s*(?:{_time('b')})"
)
_DAY_WORD = r"(?i:mon|tue|wed|thu|fri|sat|sun)[a-z]{0,6}"
_WEEKDAYS = re.compile(
    rf"(?=[MTWFSmtwfsEeDd7])(?:\b(?P<d1>{_DAY_WORD})\.?"
    rf"\s*(?:-|–|—|(?i:to|through|thru|until|till))\s*(?P<d2>{_DAY_WORD})(?![\w])"
    rf"|\b(?P<one>{_DAY_NAME}s?)\b"
    r"|\b(?P<set>(?i:weekdays|weekends?|every\s+day|daily|7\s+days\s+a\s+week))\b)"
)
_CODES = "|".join(code.upper() for code in _CURRENCIES)
_MONEY = re.compile(
    rf"(?=[\d£€$UGE])"
    rf"(?:(?P<sym>US\$|[£€$])\s?(?P<a1>{_NUM}){_NUM_END}(?:\s?(?P<scale>k|m|bn)\b)?"
    rf"|\b(?P<code>{_CODES})\s?(?P<a2>{_NUM}){_NUM_END}"
    rf"|{_FREE}(?P<a3>{_NUM}){_NUM_END}\s?(?P<word>[^\W\d_]+))"
)
_PERCENT = re.compile(rf"{_FREE}(?P<a>{_NUM}){_NUM_END}\s?(?:%|(?i:percent|per\s?cent)\b)")
_QUANTITY = re.compile(
    rf"{_FREE}(?P<lo>{_NUM}){_NUM_END}(?:\s*(?:-|–|—|(?i:to))\s*(?P<hi>{_NUM}){_NUM_END})?"
    rf"\s*-?\s*(?:(?i:business|working|calendar)\s+)?(?P<unit>[^\W\d_]+)"
)
_WORD_DURATION = re.compile(  # (?i:...) on the words only: a case-blind [a-z] is slow to build
    r"(?=[AaHhNnSs])(?:\b(?P<half>(?i:half)\s+)?(?i:an?)\s+"
    r"(?:(?i:business|working|calendar)\s+)?(?P<unit>[A-Za-z]+)"
    r"|\b(?P<next>(?i:next|same))\s+(?:(?i:business|working)\s+)?(?i:day)\b)")
_NUMBER = re.compile(rf"(?=\d)(?<![\w.,/:-])(?P<a>{_NUM}){_NUM_END}(?![^\W\d_]|%)")
_SCALES = {"k": 1e3, "m": 1e6, "bn": 1e9}
_MONTH_NUMBER = {m[:3]: i for i, m in enumerate(MONTHS, 1)}


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _unit(word: str) -> tuple[str, float] | None:
    """(base unit, factor) of a unit as written: abbreviations exactly, words in any case."""
    if word in _UNITS:
        return _UNITS[word]
    return _UNITS[word.lower()] if word.lower() in _UNIT_WORDS_ANY_CASE else None


def _weekday(word: str, full: bool = False) -> int | None:
    """0 for "Monday", "Mondays", and unless `full` for "Mon", "Tues"."""
    w = word.lower().rstrip(".")
    w = w[:-1] if w.endswith("s") and w[:-1] in WEEKDAYS else w
    for i, day in enumerate(WEEKDAYS):
        if w == day or (not full and len(w) >= 3 and day.startswith(w)):
            return i
    return None


def _minutes(m: re.Match[str], p: str) -> int | None:
    """Minutes after midnight of the time in the groups prefixed `p`."""
    if m.group(f"{p}noon"):
        return 0 if m.group(f"{p}noon").lower() == "midnight" else 720
    if m.group(f"{p}h24"):
        hour, minute = int(m.group(f"{p}h24")), int(m.group(f"{p}m24"))
        return hour * 60 + minute if minute < 60 and hour * 60 + minute <= 1440 else None
    hour, minute = int(m.group(f"{p}h")), int(m.group(f"{p}m") or 0)
    if minute >= 60 or not 1 <= hour <= 12:
        return None
    meridiem = (m.group(f"{p}ap") or m.group(f"{p}ap2")).lower()
    return (hour % 12 + (12 if meridiem == "p" else 0)) * 60 + minute


def _date_readings(m: re.Match[str]) -> tuple[Date, ...]:
    if m.group("iy"):
        readings: list[Date] = [(int(m.group("iy")), int(m.group("im")), int(m.group("id")))]
    elif m.group("ny"):
        a, b, y = int(m.group("na")), int(m.group("nb")), int(m.group("ny"))
        readings = [(y, b, a), (y, a, b)] if a != b else [(y, a, b)]
    else:
        day, name, year = ((m.group("d1"), m.group("m1"), m.group("y1")) if m.group("d1")
                           else (m.group("d2"), m.group("m2"), m.group("y2")) if m.group("m2")
                           else (None, m.group("m3"), m.group("y3")))
        readings = [(int(year) if year else None, _MONTH_NUMBER[name.lower().rstrip(".")[:3]],
                     int(day) if day else None)]
    return tuple(r for r in readings if (r[1] is None or 1 <= r[1] <= 12)
                 and (r[2] is None or 1 <= r[2] <= 31))


def _read_date(m: re.Match[str]) -> dict | None:
    dates = _date_readings(m)
    return {"kind": "date", "unit": "", "dates": dates} if dates else None


def _read_hours(m: re.Match[str]) -> dict | None:
    close = _minutes(m, "b")
    if close is None:
        return None
    if m.group("abare"):  # "9-5pm": the opening hour is the latest reading before closing
        hour = int(m.group("abare"))
        options = [hour % 12 * 60 + half for half in (0, 720)] if 1 <= hour <= 12 else []
        opening = max((o for o in options if o < close), default=None)
    else:
        opening = _minutes(m, "a")
    if opening is None:
        return None
    return {"kind": "hours", "unit": "", "low": opening, "high": close}


def _read_time(m: re.Match[str]) -> dict | None:
    at = _minutes(m, "a")
    return None if at is None else {"kind": "time", "unit": "", "low": at, "high": at}


def _read_weekdays(m: re.Match[str]) -> dict | None:
    if m.group("set"):
        word = m.group("set").lower()
        days = (range(5) if word == "weekdays" else range(5, 7) if word.startswith("weekend")
                else range(7))
        return {"kind": "weekdays", "unit": "", "days": frozenset(days)}
    if m.group("one"):
        return {"kind": "weekdays", "unit": "",
                "days": frozenset({_weekday(m.group("one"), full=True)})}
    first, last = _weekday(m.group("d1")), _weekday(m.group("d2"))
    if first is None or last is None:
        return None
    return {"kind": "weekdays", "unit": "",
            "days": frozenset((first + i) % 7 for i in range((last - first) % 7 + 1))}


def _read_money(m: re.Match[str]) -> dict | None:
    if m.group("sym"):
        code, amount = _SYMBOLS[m.group("sym")], _number(m.group("a1"))
        amount *= _SCALES[m.group("scale")] if m.group("scale") else 1.0
    elif m.group("code"):
        code, amount = m.group("code").lower(), _number(m.group("a2"))
    else:
        word = m.group("word")
        if word.isupper() and word.lower() in _CURRENCIES:
            code, factor = word.lower(), 1.0
        elif word.lower() in _CURRENCY_WORDS:
            code, factor = _CURRENCY_WORDS[word.lower()]
        else:
            return None
        amount = _number(m.group("a3")) * factor
    return {"kind": "money", "unit": code, "low": amount, "high": amount}


def _read_percent(m: re.Match[str]) -> dict | None:
    amount = _number(m.group("a"))
    return {"kind": "percent", "unit": "%", "low": amount, "high": amount}


def _duration_or_quantity(unit: str, low: float, high: float) -> dict | None:
    found = _unit(unit)
    if found is None:
        return None
    base, factor = found
    return {"kind": "duration" if base == "day" else "quantity", "unit": base,
            "low": low * factor, "high": high * factor,
            "calendar": unit.lower() in _CALENDAR_UNITS}


def _read_quantity(m: re.Match[str]) -> dict | None:
    low = _number(m.group("lo"))
    return _duration_or_quantity(m.group("unit"), low,
                                 _number(m.group("hi")) if m.group("hi") else low)


def _read_word_duration(m: re.Match[str]) -> dict | None:
    """"a day", "an hour", "half an hour", "next business day", "same day"."""
    if m.group("next"):
        days = 0.0 if m.group("next").lower() == "same" else 1.0
        return {"kind": "duration", "unit": "day", "low": days, "high": days}
    amount = 0.5 if m.group("half") else 1.0
    found = _duration_or_quantity(m.group("unit"), amount, amount)
    return found if found and found["kind"] == "duration" else None


def _read_number(m: re.Match[str]) -> dict | None:
    amount = _number(m.group("a"))
    return {"kind": "number", "unit": "", "low": amount, "high": amount}


# Tried in this order; a later pattern reads only text no earlier value took. Each reader
# gives the fields of a `Value` for one match, or None when the match is no value. The
# second element: whether the pattern needs a digit (most texts have none: skipped).
_READERS: tuple[tuple[re.Pattern[str], bool, Callable[[re.Match[str]], dict | None]], ...] = (
    (_DATE, True, _read_date), (_HOURS, True, _read_hours), (_TIME, False, _read_time),
    (_WEEKDAYS, False, _read_weekdays), (_MONEY, True, _read_money),
    (_PERCENT, True, _read_percent), (_QUANTITY, True, _read_quantity),
    (_WORD_DURATION, False, _read_word_duration), (_NUMBER, True, _read_number),
)
_ANY_DIGIT = re.compile(r"\d")


def find_values(text: str) -> list[Value]:
    """Every value `text` states, in order of position."""
    return list(_values_of(text))


# The same sentences and spans are read by every conflict check of an answer, and again for
# the next question that retrieves them: values are immutable, so they are kept.
@lru_cache(maxsize=8192)
def _values_of(text: str) -> tuple[Value, ...]:
    digits = _Digits(text)
    has_digit = _ANY_DIGIT.search(digits.text) is not None
    taken: list[tuple[int, int]] = []
    found: list[Value] = []
    for pattern, needs_digit, read in _READERS:
        if needs_digit and not has_digit:
            continue
        for m in pattern.finditer(digits.text):
            start, end = digits.span(m.start(), m.end())
            if any(start < b and end > a for a, b in taken):
                continue
            fields = read(m)
            if fields is None:
                continue
            found.append(Value(text=text[start:end], start=start, end=end, **fields))
            taken.append((start, end))
    return tuple(sorted(found, key=lambda v: v.start))


_WORD = re.compile(r"[^\W\d_]+|\d+")
_YEAR = re.compile(r"\d{4}")
_HEDGE_BEFORE = re.compile(
    r"\b(?:" + "|".join(h.replace(" ", r"\s+") for h in HEDGES) + r")\s+$", re.I)


def hedged_start(text: str, start: int) -> int:
    """Where the value starting at `start` begins with the hedge right before it ("within"
    in "accepted within 30 days"); `start` when there is none."""
    m = _HEDGE_BEFORE.search(text, 0, start)
    return m.start() if m else start


def read_value(text: str) -> Value | None:
    """`text` read as one value, None when it is not one ("about 30 days", "from 9am to 5pm"
    and "in 1998" are; "30 days after delivery" and "Lyon" are not). A span that is only a
    number of four digits from 1000 to 2999 is a year."""
    values = _values_of(text)
    if len(values) != 1:
        return None
    v = values[0]
    rest = text[:v.start] + " " + text[v.end:]
    if any(w.lower() not in FILLER for w in _WORD.findall(rest)):
        return None
    if v.kind == "number" and _YEAR.fullmatch(v.text) and 1000 <= v.low <= 2999:
        return Value(kind="date", unit="", text=v.text, start=v.start, end=v.end,
                     dates=((int(v.low), None, None),))
    return v


# --- comparison ---------------------------------------------------------------------------

_ORDER: dict[Relation, int] = {"equal": 0, "different": 1, "incomparable": 2}


def _date_relation(a: Date, b: Date) -> Relation:
    shared = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
    if not shared:
        return "incomparable"  # "March 2024" and "1 April": nothing stated by both
    return "equal" if all(x == y for x, y in shared) else "different"


def compare(a: Value, b: Value) -> Relation:
    """How two values stand: the same value (`equal`), two values of one kind and unit that
    differ (`different`), or values that cannot be compared (`incomparable`)."""
    if a.kind != b.kind or a.unit != b.unit:
        return "incomparable"
    if a.kind == "date":
        # Of every pair of readings, the most agreeable: ambiguity never makes a difference.
        return min((_date_relation(x, y) for x in a.dates for y in b.dates),
                   key=_ORDER.__getitem__)
    if a.kind == "weekdays":
        return "equal" if a.days == b.days else "different"
    if a.kind in ("time", "hours"):
        return "equal" if (a.low, a.high) == (b.low, b.high) else "different"
    scale = max(abs(a.high), abs(b.high), 1e-9)
    slack = (_CALENDAR_SLACK if a.calendar != b.calendar else 1e-9) * scale
    return "equal" if a.low <= b.high + slack and b.low <= a.high + slack else "different"


def compare_texts(a: str, b: str) -> Relation:
    """`compare` of two texts each read as one value (`read_value`); a text that is no value
    is `incomparable` with anything."""
    va, vb = read_value(a), read_value(b)
    if va is None or vb is None:
        return "incomparable"
    return compare(va, vb)


def states(text: str, value: Value) -> bool:
    """Whether `text` states `value` among its values."""
    return any(compare(v, value) == "equal" for v in _values_of(text))
