"""Finding a quote in a chunk: tolerant to whitespace, case and punctuation, never to words.

Both texts are reduced to their alphanumeric tokens (NFKC, casefolded) separated by single
spaces; the quote must appear there on token boundaries. "30 days" never matches "14 days",
and "30 days" never matches inside "130 days".
"""

from __future__ import annotations

import functools
import re
import unicodedata

MIN_QUOTE_TOKENS = 2


_ASCII_WORD = re.compile(r"[A-Za-z0-9]+")


def normalize_with_map(text: str) -> tuple[str, list[int]]:
    """Normalized text and, for each of its characters, the index of the source character."""
    if text.isascii():
        return _normalize_ascii(text)
    out: list[str] = []
    index: list[int] = []
    pending_space = False
    for i, ch in enumerate(text):
        for f in _fold(ch):
            if f.isalnum():
                if pending_space and out:
                    out.append(" ")
                    index.append(i)
                pending_space = False
                out.append(f)
                index.append(i)
            else:
                pending_space = True
    return "".join(out), index


@functools.lru_cache(maxsize=4096)
def _fold(ch: str) -> str:
    return unicodedata.normalize("NFKC", ch).casefold()


def _normalize_ascii(text: str) -> tuple[str, list[int]]:
    """The same result for ASCII text, a word at a time: NFKC leaves ASCII alone, casefold is
    lower(), and the alphanumerics are exactly [A-Za-z0-9]."""
    words: list[str] = []
    index: list[int] = []
    for m in _ASCII_WORD.finditer(text):
        start, end = m.span()
        if words:
            index.append(start)  # the separating space maps to the word's first character
        words.append(m.group().lower())
        index.extend(range(start, end))
    return " ".join(words), index


def normalize(text: str) -> str:
    return normalize_with_map(text)[0]


def locate_quote(quote: str, content: str) -> tuple[int, int] | None:
    """(start, end) of the quote inside `content`, or None. Offsets are into `content`."""
    needle = normalize(quote)
    if len(needle.split(" ")) < MIN_QUOTE_TOKENS and len(needle) < 6:
        return None
    haystack, index = normalize_with_map(content)
    if not needle:
        return None
    padded = f" {haystack} "
    pos = padded.find(f" {needle} ")
    if pos < 0:
        return None
    first = pos  # position in haystack (padding shifts by one, the leading space by one back)
    last = first + len(needle) - 1
    return index[first], index[last] + 1


def locate_span(span: str, quote: str) -> tuple[int, int] | None:
    """(start, end) of a short answer span ("Lyon", "1066") inside an already verified quote,
    on token boundaries; no minimum length, since the quote itself was verified."""
    needle = normalize(span)
    if not needle:
        return None
    haystack, index = normalize_with_map(quote)
    pos = f" {haystack} ".find(f" {needle} ")
    if pos < 0:
        return None
    return index[pos], index[pos + len(needle) - 1] + 1


# A number found as an answer span ("4.99", "10") leaves out what makes it an amount: the
# currency sign before it, the percent sign or unit after it. `widen_amount` takes them in.
_CURRENCY_SYMBOL = r"(?:US|A|C|HK|NZ|S)?\$|[£€¥₹₩₽₺₪₫¢]"
_CURRENCY_CODE = r"(?:USD|EUR|GBP|JPY|CHF|CAD|AUD|NZD|SEK|NOK|DKK|PLN|CZK|INR|CNY|HKD|SGD)"
_BEFORE_NUMBER = re.compile(rf"(?:{_CURRENCY_SYMBOL}|\b{_CURRENCY_CODE} ?)\Z")
_AFTER_NUMBER = re.compile(
    r" ?(?:%|‰|°[CF]?)"  # 10%, 5 °C
    rf"| ?{_CURRENCY_CODE}\b"  # 4.99 EUR
    r"| ?(?:km/h|mph|kph|kWh|kW|GHz|MHz|Hz|km|cm|mm|m|kg|mg|g|lbs?|oz|ml|cl|l|TB|GB|MB|KB"
    r"|ft|W|V)\b(?!['’])|p\b"  # 2 kg, 99p (never "5 m's"; no "in": "item 5 in the list")
    r"|(?i: (?:per ?cent|percent|thousand|million|billion|trillion|pounds?|pence|dollars?"
    r"|euros?|cents?|(?:business |working )?(?:days?)|seconds?|minutes?|hours?|weeks?"
    r"|months?|years?|miles?|kilo(?:gram|metre|meter)s?|metres?|meters?|litres?|liters?))\b")


def widen_amount(text: str, start: int, end: int) -> tuple[int, int]:
    """`text[start:end]` widened to the currency sign just before it and the percent sign or
    unit just after it, when it is a number: "£4.99" for "4.99", "10%" for "10", "2 kg" for
    "2". Anything else is returned as it is."""
    span = text[start:end]
    if not span or not span[0].isdigit() and not span[-1].isdigit():
        return start, end
    if span[0].isdigit():
        before = _BEFORE_NUMBER.search(text, max(0, start - 4), start)
        if before:
            start = before.start()
    if span[-1].isdigit():
        after = _AFTER_NUMBER.match(text, end)
        if after:
            end = after.end()
    return start, end
