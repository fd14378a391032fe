"""Does a quote back the sentence that cites it? A lexical check for generated sentences.

The gate proves a quote is in its chunk; it cannot tell whether the sentence says what the
quote says ("all refunds are approved instantly" citing "You can return anything within 90
days" passes the gate). `claim_support` measures the sentence against its quotes: the share
of its content words found in them (a shared 5-letter prefix counts: refund / refundable),
the names it states that they lack, and how many words the quotes have at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from citadel.text.terms import content_terms, tokens

_PREFIX = 5
# A capitalised word that does not start a sentence: a name the quotes must contain too.
_NAME = re.compile(r"(?<!^)(?<![.!?:]\s)(?<![\"“(])\b[A-Z][\w'-]+\b")
_MARKER = re.compile(r"\[[^\[\]]*\]")


@dataclass(frozen=True)
class Support:
    coverage: float  # share of the sentence's content terms found in its quotes
    missing_terms: tuple[str, ...]
    missing_names: tuple[str, ...]
    quote_words: int


def claim_support(sentence: str, quotes: list[str]) -> Support:
    text = _MARKER.sub(" ", sentence).strip()
    evidence = " ".join(quotes)
    terms = list(dict.fromkeys(t for t in content_terms(text) if not t.isdigit()))
    quoted = set(content_terms(evidence))
    prefixes = {t[:_PREFIX] for t in quoted if len(t) >= _PREFIX}
    missing = tuple(t for t in terms if t not in quoted
                    and not (len(t) >= _PREFIX and t[:_PREFIX] in prefixes))
    lowered = evidence.lower()
    names = tuple(dict.fromkeys(n for n in _NAME.findall(text) if n.lower() not in lowered))
    coverage = 1.0 - len(missing) / len(terms) if terms else 1.0
    return Support(coverage=coverage, missing_terms=missing, missing_names=names,
                   quote_words=len(tokens(evidence)))
