"""Mentions: a question about something no retrieved source mentions is not answered by them.

"Can I pay with PayPal?" beside "We accept Visa, Mastercard and American Express" reads as
answered to a reader that weighs the sentence's fit (paying, cards, a list of brands); "What
about the weather?" after a warranty question is rewritten into a warranty question about the
weather, which a warranty sentence seems to answer. Both ask about something — a name the
question gives (`QuestionAnalysis.names`), or a follow-up fragment's own words
(`answering.follow_up.asked_about`) — that no retrieved chunk mentions, in its text, title or
section: the honest answer is that the knowledge base does not describe it.

A name must be mentioned whole (every name; a name of several words, "Zephyr Pro", as those
words in that order, so a variant is not answered from its sibling's page); a fragment needs
one of its words mentioned. Words are compared stemmed, after folding case and accents
("Beyonce" is "Beyoncé").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from citadel.records import Context
from citadel.text.folding import fold
from citadel.text.terms import content_terms

_POSSESSIVE = re.compile(r"['’]s\b")


def _terms(text: str) -> list[str]:
    # "Beyoncé's album" mentions Beyoncé: the possessive is not part of the name.
    return content_terms(_POSSESSIVE.sub("", fold(text).text))


def _said(context: Context) -> list[list[str]]:
    return [_terms(" ".join((b.chunk.title, b.chunk.section, b.chunk.content)))
            for b in context.blocks]


def _in(phrase: list[str], said: list[list[str]]) -> bool:
    n = len(phrase)
    return any(terms[i:i + n] == phrase for terms in said for i in range(len(terms) - n + 1))


def unmentioned(names: Sequence[str], context: Context, fragment: Sequence[str] = ()
                ) -> list[str]:
    """What the question asks about that no chunk of the context mentions, as the question
    wrote it: its unmentioned names, else the fragment's words when none is mentioned."""
    if not context.blocks or not (names or fragment):
        return []
    said = _said(context)
    missing = [name for name in names if _terms(name) and not _in(_terms(name), said)]
    if missing:
        return missing
    words = [w for w in fragment if _terms(w)]
    if words and not any(_in(_terms(w), said) for w in words):
        return words
    return []
