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
