"""Comparable facts: the values a sentence states, tied to the words around them.

A `Fact` is one value of one kind in one sentence:

| kind       | examples                                    | compared as                          |
|------------|---------------------------------------------|--------------------------------------|
| `duration` | 30 days, 5 business days, about a day, 3–5 | days (hour = 1/24, week = 7, month = |
|            | weeks, 24 months, next business day         | 30, year = 365), ranges overlap      |
| `money`    | £9.95, €6.95, $20, 49 pounds                | amount, per currency                 |
| `percent`  | 10%, 15 percent                             | number                               |
| `date`     | 31 January 2027, January 31, 2027, 2026-03-01 | (year, month, day); a missing year |
|            |                                             | matches any                          |
| `place`    | warehouse in Leeds, our Rotterdam warehouse | name, per kind of facility           |
| `count`    | 3 gift cards                                | number, per counted noun             |

Each fact records its *subject* (the sentence's leading content words plus the words right
around the value: what the value quantifies) and its *scope* (capitalised words such as
"EU" or "Norway" that narrow what the sentence is about). `citadel.answering.conflicts` compares
facts across documents with these; nothing here knows about questions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from citadel.text.terms import STOPWORDS, stem

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")
_MONTH_RE = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|"
             r"Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)")
_NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "fourteen": 14, "fifteen": 15, "twenty": 20, "thirty": 30, "sixty": 60, "ninety": 90,
}
_NUM = r"(?:\d+(?:\.\d+)?|" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True)) + r")"
_UNIT_DAYS = {"minute": 1 / 1440, "hour": 1 / 24, "day": 1.0, "week": 7.0, "month": 30.0,
              "year": 365.0}

_DURATION = re.compile(
    r"(?:\b(?:about|around|approximately|roughly|up\s+to|within|under|less\s+than|"
    r"more\s+than|over|at\s+least|at\s+most)\s+)?"
    rf"\b(?P<lo>{_NUM})(?:\s*(?:-|–|to)\s*(?P<hi>{_NUM}))?\s+"
    r"(?P<qual>business\s+|working\s+|calendar\s+)?(?P<unit>minute|hour|day|week|month|year)s?\b"
    r"|\b(?P<next>next|same)\s+(?:business\s+|working\s+)?day\b",
    re.I,
)
_MONEY = re.compile(
    r"(?P<cur>[£€$])\s?(?P<amt>\d+(?:,\d{3})*(?:\.\d+)?)"
    r"|\b(?P<amt2>\d+(?:\.\d+)?)\s*(?P<cur2>pounds|euros|dollars|GBP|EUR|USD)\b",
    re.I,
)
_PERCENT = re.compile(r"\b(?P<amt>\d+(?:\.\d+)?)\s*(?:%|percent\b|per\s+cent\b)", re.I)
_DATE = re.compile(
    rf"\b(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?P<m>{_MONTH_RE})\b(?:\s+(?P<y>\d{{4}}))?"
    rf"|\b(?P<m2>{_MONTH_RE})\s+(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(?P<y2>\d{{4}}))?"
    r"|\b(?P<y3>\d{4})-(?P<m3>\d{2})-(?P<d3>\d{2})\b",
)
_FACILITY = (r"(?P<noun>warehouse|depot|returns\s+cent(?:re|er)|distribution\s+cent(?:re|er)|"
             r"fulfil?ment\s+cent(?:re|er)|office|store|shop)")
_NAME = r"(?P<name>[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)?)"
_PLACE_AFTER = re.compile(rf"\b{_FACILITY}\s+(?:in|at|near)\s+{_NAME}")
_PLACE_BEFORE = re.compile(
    rf"\b(?:our|the|its|their)\s+{_NAME}\s+{_FACILITY}\b"
)
_COUNT = re.compile(r"\b(?P<n>\d+)\s+(?P<noun>[a-z]{3,})\b")

# Words that sit between a value and what it quantifies without saying what that is.
_FILLER = frozenset({
    "within", "about", "around", "approximately", "roughly", "least", "most", "under",
    "until", "till", "from", "up", "next", "same", "business", "working", "calendar",
    "minute", "hour", "day", "week", "month", "year", "st", "nd", "rd", "th",
    *(stem(m) for m in _MONTHS), *_MONTHS,
})
UNIT_WORDS = frozenset({"minute", "hour", "day", "week", "month", "year", "business",
                        "working", "calendar"})
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?|\d+(?:[.,]\d+)*", re.UNICODE)


@dataclass(frozen=True)
class Fact:
    kind: str                  # duration | money | percent | date | place | count
    unit: str                  # what makes two values comparable: currency, facility, noun
    text: str                  # the value as written: "30 days"
    low: float | None          # numeric kinds: the value (a range gives low..high)
    high: float | None
    key: tuple[int | str, ...]  # non-numeric kinds: (y, m, d) for dates, (name,) for places
    start: int                 # offsets of the value in `sentence`
    end: int
    sentence: str
    subject: frozenset[str]    # stems: the sentence's head + the words around the value
    scope: frozenset[str]      # capitalised words (other than the value) narrowing the topic
    lead: str = ""             # the word right before the value: "until", "from", "within"

    @property
    def value(self) -> str:
        return self.text


def _number(token: str) -> float:
    token = token.lower()
    return float(_NUMBER_WORDS[token]) if token in _NUMBER_WORDS else float(token)


def _words(text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group()) for m in _WORD.finditer(text)]


def _content(word: str) -> str | None:
    w = word.lower()
    if w in STOPWORDS or w[0].isdigit() or w in _NUMBER_WORDS:
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
        if w.lower() in STOPWORDS or w.lower() in _MONTHS or w.lower()[:3] in {
                m[:3] for m in _MONTHS}:
            continue
        out.add(w.lower())
    return frozenset(out)


def _month(name: str) -> int:
    return next(i for i, m in enumerate(_MONTHS, 1) if m.startswith(name.lower()[:3]))


def _facility(noun: str) -> str:
    noun = re.sub(r"\s+", " ", noun.lower())
    return "warehouse" if noun in {"warehouse", "depot"} or "cent" in noun else noun


def extract_facts(sentence: str) -> list[Fact]:
    """Every comparable value in one sentence, in order of position."""
    found: list[tuple[str, str, float | None, float | None, tuple[int | str, ...], int, int]]
    found = []
    taken: list[tuple[int, int]] = []

    def free(s: int, e: int) -> bool:
        return all(e <= a or s >= b for a, b in taken)

    for m in _DATE.finditer(sentence):
        if m.group("y3"):
            key: tuple[int | str, ...] = (int(m.group("y3")), int(m.group("m3")),
                                          int(m.group("d3")))
        else:
            d, mo, y = (m.group("d"), m.group("m"), m.group("y")) if m.group("d") else (
                m.group("d2"), m.group("m2"), m.group("y2"))
            if not 1 <= int(d) <= 31:
                continue
            key = (int(y) if y else 0, _month(mo), int(d))
        found.append(("date", "", None, None, key, m.start(), m.end()))
        taken.append((m.start(), m.end()))
    for m in _MONEY.finditer(sentence):
        cur = (m.group("cur") or m.group("cur2")).lower()
        cur = {"£": "gbp", "€": "eur", "$": "usd", "pounds": "gbp", "euros": "eur",
               "dollars": "usd"}.get(cur, cur)
        amount = float((m.group("amt") or m.group("amt2")).replace(",", ""))
        found.append(("money", cur, amount, amount, (), m.start(), m.end()))
        taken.append((m.start(), m.end()))
    for m in _PERCENT.finditer(sentence):
        if free(m.start(), m.end()):
            amount = float(m.group("amt"))
            found.append(("percent", "%", amount, amount, (), m.start(), m.end()))
            taken.append((m.start(), m.end()))
    for m in _DURATION.finditer(sentence):
        if not free(m.start(), m.end()):
            continue
        if m.group("next"):
            lo = hi = 0.0 if m.group("next").lower() == "same" else 1.0
        else:
            factor = _UNIT_DAYS[m.group("unit").lower()]
            lo = _number(m.group("lo")) * factor
            hi = _number(m.group("hi")) * factor if m.group("hi") else lo
        found.append(("duration", "days", lo, hi, (), m.start(), m.end()))
        taken.append((m.start(), m.end()))
    places = [(m, m.group("noun")) for m in _PLACE_AFTER.finditer(sentence)]
    places += [(m, m.group("noun")) for m in _PLACE_BEFORE.finditer(sentence)
               if not _PLACE_AFTER.match(sentence, m.start("noun"))]
    for m, noun in places:
        name = m.group("name")
        found.append(("place", _facility(noun), None, None, (name.lower(),), m.start("name"),
                      m.end("name")))
        taken.append((m.start("name"), m.end("name")))
    for m in _COUNT.finditer(sentence):
        noun = m.group("noun").lower()
        if not free(m.start(), m.end()) or noun in STOPWORDS or noun in _FILLER:
            continue
        n = _number(m.group("n"))
        found.append(("count", stem(noun), n, n, (), m.start(), m.end()))
    facts = [
        Fact(kind=kind, unit=unit, text=sentence[s:e], low=lo, high=hi, key=key, start=s,
             end=e, sentence=sentence, subject=subject_terms(sentence, s, e),
             scope=scope_terms(sentence, s, e), lead=lead_word(sentence, s))
        for kind, unit, lo, hi, key, s, e in found
    ]
    return sorted(facts, key=lambda f: f.start)


def comparable(a: Fact, b: Fact) -> bool:
    """Same kind and unit (a £ price is never compared with a € price)."""
    return a.kind == b.kind and a.unit == b.unit


def agree(a: Fact, b: Fact, tolerance: float = 0.05) -> bool:
    """Whether two comparable facts state the same value (ranges that overlap agree; numbers
    within `tolerance`, relative, agree: 24 months and 2 years)."""
    if a.kind in ("date", "place"):
        if a.kind == "date" and (a.key[0] == 0 or b.key[0] == 0):
            return a.key[1:] == b.key[1:]
        return a.key == b.key
    assert a.low is not None and a.high is not None and b.low is not None and b.high is not None
    slack = tolerance * max(abs(a.high), abs(b.high), 1e-9)
    return a.low <= b.high + slack and b.low <= a.high + slack
