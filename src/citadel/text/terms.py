"""Content terms of a text, for lexical scoring of sentences (not for quote matching)."""

from __future__ import annotations

import re

_WORD = re.compile(r"[0-9]+(?:[.,][0-9]+)*|[^\W\d_]+(?:'[^\W\d_]+)?", re.UNICODE)

STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not now of off on once only or
    other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your yours
    yourself yourselves get got may might must shall also us let lets i'm i've you're can't
    don't does doesn't im ive please tell know want need like one
    """.split()  # noqa: SIM905 - a word list reads best as text
)


def stem(word: str) -> str:
    """A light suffix stripper: enough to match returns/returned/returning to return."""
    for suffix, min_len in (("ies", 5), ("ing", 6), ("ed", 5), ("es", 5), ("s", 4)):
        if word.endswith(suffix) and len(word) >= min_len:
            base = word[: -len(suffix)]
            return base + "y" if suffix == "ies" else base
    return word


def tokens(text: str) -> list[str]:
    return [m.group().lower() for m in _WORD.finditer(text)]


def content_terms(text: str) -> list[str]:
    return [stem(t) for t in tokens(text) if t not in STOPWORDS]
