"""Pseudo-citations out of text: the only marker an answer may carry is a gate-written `[Sn]`.

Text reaches the user by two roads. Generator sentences pass the gate, which calls
`strip_markers` on them and then writes its own `[Sn]` for each surviving citation. Everything
else — document titles, sources, values quoted in a conflict note, the user's own question
echoed in an abstention — is written by Citadel's code around the gate and goes through
`neutralize`. Both remove whatever could pass for a citation:

* marker brackets in any script (`MARKER_OPEN`/`MARKER_CLOSE`: opening and closing
  punctuation whose Unicode name calls it a bracket — `[]`, `［］`, `【】`, `〔〕`, `〖〗`,
  `⟦⟧`, `⟨⟩`, `《》`, ... — but not parentheses, curly brackets or the CJK corner brackets
  `「」`, which are prose and quotation marks): `strip_markers` removes every group in them
  with its inside, as the gate always did for `[...]`; `neutralize` removes the brackets and
  keeps their words (`Handbook [2024 edition]` -> `Handbook 2024 edition`);
* any delimited group, in any Unicode opening/closing/quotation punctuation (`()`, `«»`,
  `“”`, `（）`, ...), whose inside is a label list (`(S1)`, `«S2, S3»`) or an attribution
  (`(Source: legal-handbook.pdf §9.1)`), with the space before it;
* prose attributions, `Source: ...`, `Sources: ...`, `Citation: ...`, `Reference: ...`, to the
  end of the line.

The result contains no marker bracket at all, so nothing downstream (the stream's marker
filter, a client's `[Sn]` renderer) can read a marker into it, and removing one piece can
never splice another together: both functions repeat until the text no longer changes.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

MAX_MARKER_CHARS = 300  # longest inside of a bracket group read as one marker


def _marker_bracket(ch: str) -> bool:
    name = unicodedata.name(ch, "")
    # "BRAKCET": Unicode's own misspelling in U+FE18's name.
    return (("BRACKET" in name or "BRAKCET" in name)
            and "CURLY" not in name and "CORNER" not in name)


def _punctuation(categories: tuple[str, ...], marker: bool | None = None) -> str:
    """Every BMP character of these categories (none exist above it), marker brackets only
    (True), none of them (False) or all (None)."""
    return "".join(
        ch for ch in map(chr, range(0x10000))
        if unicodedata.category(ch) in categories
        and (marker is None or _marker_bracket(ch) == marker)
    )


MARKER_OPEN = _punctuation(("Ps",), marker=True)
MARKER_CLOSE = _punctuation(("Pe",), marker=True)
# Quotation marks open and close in both directions across languages („…“, »…«): a
# citation-shaped group may be delimited by any of them, on either side.
DELIMITERS = _punctuation(("Ps", "Pe", "Pi", "Pf"))

_OPEN, _CLOSE, _ANY = (re.escape(s) for s in (MARKER_OPEN, MARKER_CLOSE, DELIMITERS))
_BRACKETS = re.compile(f"[{_OPEN}{_CLOSE}]")
# The space before a removed group goes with it. `(?<!\s)`: only from the start of a run of
# spaces, so a long run is scanned once, not once per position (linear, not quadratic).
_LEAD = r"(?<!\s)\s*"
# A marker-bracket group without nested brackets or newlines; an unterminated one too.
_MARKER_GROUP = re.compile(
    rf"{_LEAD}[{_OPEN}][^{_OPEN}{_CLOSE}\n]{{0,{MAX_MARKER_CHARS}}}(?:[{_CLOSE}]|$)")
_LABEL = r"S\s*(?:\d{1,4}|[xn])"
_STOP_AFTER_MARKERS = re.compile(r"([.!?][\"')”’]*)((?:\s*\[[^\[\]\n]*\])+)\s*\.(?=\s|$)")
_KEYWORD = r"(?:sources?|citations?|cite[sd]?|references?|refs?)"
_SEP = r"\s*(?:[,;&/–—-]|and)\s*"
# In any delimiters: (S1) «S2, S3» (S1–S3) (S2 and 3) (Source: a.pdf §9.1). An attribution
# needs its colon here ("(source code)" is prose); in marker brackets it does not.
_CITATION_GROUP = re.compile(
    rf"{_LEAD}[{_ANY}]\s*(?:{_LABEL}(?:{_SEP}(?:{_LABEL}|\d{{1,4}}))*"
    rf"|{_KEYWORD}\s*[:：][^{_ANY}\n]{{0,{MAX_MARKER_CHARS}}})\s*[{_ANY}]",
    re.I,
)
# [Source legal-handbook.pdf §4.2] 【Sources 1-2】
_SOURCE_GROUP = re.compile(
    rf"{_LEAD}[{_OPEN}]\s*{_KEYWORD}\b[^{_OPEN}{_CLOSE}\n]{{0,{MAX_MARKER_CHARS}}}[{_CLOSE}]", re.I)
# An attribution opens a line or a sentence, follows a separator, or is capitalised (after a
# space, or glued to the word before once a removal spliced them: "daysSource: …"): "… 30
# days — Source: legal-handbook.pdf §9.1." keeps "… 30 days." ("open source: yes" is prose).
_PROSE = re.compile(
    rf"(?:^|(?<=[.!?\n{_ANY}])|(?<![^\S\n])[^\S\n]*[,;:–—-]|(?<![^\S\n])[^\S\n]+"
    rf"(?=(?-i:[A-Z]))|(?<=\w)(?=(?-i:[A-Z])))[^\S\n]*{_KEYWORD}\s*[:：][^\n]*", re.I)
_SPACE = re.compile(r"\s+")


def _fixpoint(step: Callable[[str], str], text: str) -> str:
    # Every step only removes characters, so this ends; repeating it means a removal can
    # not leave behind (splice) a new pseudo-citation.
    while True:
        out = step(text)
        if out == text:
            return out
        text = out


def _sentence_end(match: re.Match[str]) -> str:
    """An attribution runs to the end of its line; the sentence's own full stop stays."""
    end = match.group().rstrip()[-1:]
    return end if end in ".!?" else ""


def _neutralize_once(text: str) -> str:
    text = _SOURCE_GROUP.sub("", _CITATION_GROUP.sub("", text))
    text = _PROSE.sub(_sentence_end, text)
    text = _BRACKETS.sub("", text)
    return _SPACE.sub(" ", text).strip()


def neutralize(text: str) -> str:
    """Text written around the gate (a title, a source, a value, the user's question), with
    every pseudo-citation removed and no marker bracket left; other words are kept."""
    return _fixpoint(_neutralize_once, text)


def strip_markers(text: str) -> str:
    """A generator's sentence without any marker, pseudo-citation or stray marker bracket:
    the gate writes the `[Sn]` of surviving citations back itself. A full stop after the
    markers of a sentence that had ended before them ("defects. [S1: "…"].") goes too."""
    text = _STOP_AFTER_MARKERS.sub(r"\1\2", text)
    return _fixpoint(lambda t: _neutralize_once(_MARKER_GROUP.sub("", t)), text)

