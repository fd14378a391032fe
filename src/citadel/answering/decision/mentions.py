"""Mentions: a question about something no retrieved source mentions is not answered by them.

"Can I pay with PayPal?" beside "We accept Visa, Mastercard and American Express" reads as
answered to a reader that weighs the sentence's fit (paying, cards, a list of brands); "What
about the weather?" after a warranty question is rewritten into a warranty question about the
weather, which a warranty sentence seems to answer. Both ask about something — a name the
question gives (`QuestionAnalysis.names`), or a follow-up fragment's own words
(`answering.follow_up.asked_about`) — that no retrieved chunk mentions, in its text, title or
section: the honest answer is that the knowledge base does not describe it.

Every name must be mentioned; a fragment needs one of its words mentioned. A name is
mentioned when the sources write it: words compared stemmed, after folding case and accents
("Beyonce" is "Beyoncé"), a misspelling of a long word forgiven ("Bismark"), an acronym
spelled out ("SP": "Scottish Parliament"); a name of two words needs both ("Zephyr Pro" is
not described by a page on the Zephyr Kettle), a longer one all but one ("the East India
Trading Company" is the East India Company). What is not written
anywhere in the sources is what they do not describe.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from citadel.records import Context
from citadel.text.folding import fold
from citadel.text.terms import content_terms

_POSSESSIVE = re.compile(r"['’]s\b")


def _terms(text: str) -> list[str]:
    # "Beyoncé's album" mentions Beyoncé: the possessive is not part of the name.
    return content_terms(_POSSESSIVE.sub("", fold(text).text))


def _in(phrase: list[str], said: list[list[str]]) -> bool:
    n = len(phrase)
    return any(terms[i:i + n] == phrase for terms in said for i in range(len(terms) - n + 1))


_CAPITALISED_RUN = re.compile(r"(?:\b[A-Z][\w'’-]*(?:\s+(?:of|and|the|for)\s+|\s+)){1,5}"
                              r"\b[A-Z][\w'’-]*")


def _initials(texts: Sequence[str]) -> set[str]:
    """The initials of runs of capitalised words: "Scottish Parliament" -> sp."""
    out = set()
    for text in texts:
        for run in _CAPITALISED_RUN.finditer(fold(text).text):
            letters = "".join(w[0] for w in run.group().split() if w[:1].isupper()).lower()
            # every stretch of the run: "The Scottish Parliament" spells sp as well as tsp
            out.update(letters[i:j] for i in range(len(letters))
                       for j in range(i + 2, len(letters) + 1))
    return out


def _word_in(term: str, words: set[str]) -> bool:
    # A misspelt name ("Bismark", "Moncalm") is still the one the sources write.
    return term in words or (len(term) >= 6 and bool(
        difflib.get_close_matches(term, words, n=1, cutoff=0.85)))


class _Said:
    """What the context says (each chunk's title, section and text), read once per request;
    its acronyms only when a name needs them."""

    def __init__(self, context: Context) -> None:
        self.texts = [" ".join((b.chunk.title, b.chunk.section, b.chunk.content))
                      for b in context.blocks]
        self.terms = [_terms(t) for t in self.texts]
        self.words = {w for terms in self.terms for w in terms}
        self._initials: set[str] | None = None

    def initials(self) -> set[str]:
        if self._initials is None:
            self._initials = _initials(self.texts)
        return self._initials

    def names(self, name: str) -> bool:
        terms = _terms(name)
        if not terms:
            return True
        if len(terms) > 1:
            # Both words of "Zephyr Pro" (a variant is not its sibling "Zephyr Kettle"); all
            # but one of a longer name ("East India Trading Company": the East India Company).
            found = sum(_word_in(t, self.words) for t in terms)
            return found >= (len(terms) - 1 if len(terms) > 2 else len(terms))
        if _word_in(terms[0], self.words):
            return True
        # An acronym the sources spell out: "SP" for the Scottish Parliament.
        return name.isupper() and 2 <= len(name) <= 5 and name.lower() in self.initials()


def unmentioned(names: Sequence[str], context: Context, fragment: Sequence[str] = ()
                ) -> list[str]:
    """What the question asks about that no chunk of the context mentions, as the question
    wrote it: its unmentioned names, else the fragment's words when none is mentioned."""
    if not context.blocks or not (names or fragment):
        return []
    said = _Said(context)
    missing = [name for name in names if not said.names(name)]
    if missing:
        return missing
    words = [w for w in fragment if _terms(w)]
    if words and not any(_in(_terms(w), said.terms) for w in words):
        return words
    return []
