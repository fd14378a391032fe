"""Names: a question about something the sources never mention is not answered by them.

"Can I pay with PayPal?" beside "We accept Visa, Mastercard and American Express" reads as
answered to a reader that weighs the sentence's fit (paying, cards, a list of brands), and
"Do you ship to Spain?" beside "We ship to the UK, Ireland and France" invites a "no" the
sources never say. Both questions name something (`QuestionAnalysis.names`) that no
retrieved chunk mentions — not its text, its title or its section: the honest answer is that
the knowledge base does not describe it, whatever else the chunks say.

Matching is by whole words after folding case and accents ("Beyonce" is "Beyoncé"); a name
of several words ("Zephyr Pro", "Lake District") is mentioned only as that phrase, so a
variant the sources do not describe is not answered from its sibling's page.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from citadel.records import Context
from citadel.text.folding import fold


def _folded(text: str) -> str:
    return fold(text).text.casefold()


def unmentioned(names: Sequence[str], context: Context) -> list[str]:
    """The names that no chunk of the context mentions, in the question's order."""
    if not names or not context.blocks:
        return []
    seen = " ".join(_folded(" ".join((b.chunk.title, b.chunk.section, b.chunk.content)))
                    for b in context.blocks)
    return [name for name in names if not re.search(_pattern(name), seen)]


def _pattern(name: str) -> str:
    words = (re.escape(w) for w in _folded(name).split())
    return r"(?<!\w)" + r"\s+".join(words) + r"(?!\w)"
