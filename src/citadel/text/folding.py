"""Text folded to what a reader takes it to say, for pattern screens (`ingest.injection`).

A planted instruction survives a pattern by looking the same to a reader while differing in
its characters: "ig\u200bnore" (a zero-width space), "ignоre" (a Cyrillic о), "ｉｇｎｏｒｅ"
(full-width letters), "ignorè" (a combining accent). `fold` undoes each of these:

* compatibility forms are decomposed (NFKD, the compatibility half of NFKC: full-width and
  mathematical letters, ligatures, superscripts, non-breaking spaces) and combining marks
  dropped, so "précédentes" reads "precedentes" (screens write their words without accents);
* format characters (Unicode category Cf: zero-width spaces and joiners, the soft hyphen,
  bidirectional controls, the BOM) and invisible fillers (Hangul fillers) are removed; the
  invisible tag characters U+E0020-U+E007E become the ASCII they shadow, so text smuggled in
  them is screened like any other;
* letters that look like Latin ones (Unicode's confusables data, shipped in the
  `confusable-homoglyphs` package: Cyrillic а е і о р с у, Greek ο ρ, ...) become those Latin
  letters — in every word when the text is mostly Latin, otherwise only in words that mix
  them with Latin letters (so a Russian or Greek page is not rewritten into accidental
  English).

The folded text is only ever matched, never shown: `Folded.origin` maps an offset in it back
to the source text, so a finding quotes the source.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from itertools import accumulate

_TAGS = range(0xE0020, 0xE007F)  # tag characters that mirror printable ASCII
_FILLERS = frozenset("\u115f\u1160\u3164\uffa0")  # Hangul fillers: letters that show nothing


def _fold_char(ch: str) -> str:
    cp = ord(ch)
    if cp in _TAGS:
        return chr(cp - 0xE0000)
    if ch in _FILLERS or unicodedata.category(ch) == "Cf":
        return ""
    decomposed = unicodedata.normalize("NFKD", ch)
    return "".join(c for c in decomposed if unicodedata.category(c) not in ("Mn", "Me"))


class _Table(dict[int, str]):
    """A `str.translate` table filled on demand, one code point at a time (every character
    looked up gets an entry, so `translate` never pays for a missing key)."""

    def __init__(self, fold_char: Callable[[str], str]) -> None:
        super().__init__()
        self.fold_char = fold_char

    def __missing__(self, cp: int) -> str:
        folded = self[cp] = self.fold_char(chr(cp))
        return folded


_CHARS = _Table(_fold_char)


@cache
def confusables() -> dict[int, str]:
    """Non-ASCII letters that look like an ASCII letter, mapped to it (Unicode's confusables
    data as the `confusable-homoglyphs` package ships it; read once, on first use)."""
    from confusable_homoglyphs.confusables import confusables_data

    table: dict[int, str] = {}
    for letter in sorted(k for k in confusables_data if len(k) == 1 and k.isascii()
                         and k.isalpha()):
        for glyph in confusables_data[letter]:
            ch = glyph["c"]
            if len(ch) == 1 and not ch.isascii() and ch.isalpha():
                # Unicode's prototype of the I/l/1 class is "l": an upper-case look-alike
                # of it (Cyrillic І, Greek Ι) stands for "I".
                table.setdefault(ord(ch), "I" if letter == "l" and ch.isupper() else letter)
    return table


_LOOKALIKES = _Table(lambda ch: confusables().get(ord(ch), ch))


class _Changes(dict[int, bool]):
    """Whether `fold` changes a character, filled on demand."""

    def __missing__(self, cp: int) -> bool:
        changes = self[cp] = _CHARS[cp] != chr(cp) or cp in confusables()
        return changes


_CHANGES = _Changes()
_ASCII_BYTES = bytes(range(0x80))
_NOT_LETTERS = bytes(b for b in range(0x80) if not chr(b).isalpha())
_MIXED_WORD = re.compile(r"\b(?=\w*[A-Za-z])(?=\w*[^\W\x00-\x7f])\w+")


@dataclass(frozen=True)
class Folded:
    text: str
    source: str
    _ends: list[int] | None = field(default=None, repr=False, compare=False)

    def origin(self, i: int) -> int:
        """The offset in the source of the character at offset `i` of the folded text
        (`len(text)` maps to `len(source)`)."""
        if self.text is self.source:
            return i
        if self._ends is None:
            # Where each source character's folding ends in the folded text.
            ends = list(accumulate(len(_CHARS[ord(c)]) for c in self.source))
            object.__setattr__(self, "_ends", ends)
        return bisect_right(self._ends, i)  # type: ignore[arg-type]

    def span(self, start: int, end: int) -> tuple[int, int]:
        """A span of the folded text as a span of the source."""
        if start >= end:
            return self.origin(start), self.origin(start)
        return self.origin(start), self.origin(end - 1) + 1


def _non_ascii(text: str) -> str:
    """The non-ASCII characters of `text`, in order: deleting the ASCII bytes of its UTF-8
    leaves every other character's bytes whole, at C speed."""
    raw = text.encode("utf-8", "surrogatepass").translate(None, _ASCII_BYTES)
    return raw.decode("utf-8", "surrogatepass")


def fold(text: str) -> Folded:
    """`text` as a reader takes it (module docstring); returned as it is when nothing in it
    folds."""
    # Most text has no character that folds (English with curly quotes and dashes): looking
    # at its few distinct non-ASCII characters is far cheaper than translating it.
    if text.isascii() or not any(_CHANGES[ord(c)] for c in set(_non_ascii(text))):
        return Folded(text, text)
    folded = text.translate(_CHARS)
    ascii_part = folded.encode("ascii", "ignore")
    ascii_letters = len(ascii_part.translate(None, _NOT_LETTERS))
    non_ascii = len(folded) - len(ascii_part)
    if ascii_letters >= non_ascii:
        folded = folded.translate(_LOOKALIKES)
    else:
        folded = _MIXED_WORD.sub(lambda m: m.group().translate(_LOOKALIKES), folded)
    return Folded(folded, text)
