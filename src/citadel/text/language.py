"""Which language a question is in, and its content words in that language.

The evidence reader and the English analysis judge English. A question in another language
must not be judged by English rules (in "Was besagt der Satz von Gauß-Bonnet?", "der" and
"von" are not words an answer must state), so the judgement asks this module first. The
stop-word lists are spaCy's (`spacy/lang/<code>/stop_words.py`), which ship with spaCy
itself: no model is loaded for them.
"""

from __future__ import annotations

import importlib.util
import re
from functools import cache
from pathlib import Path

LANGUAGES = ("en", "de", "fr", "es", "it", "nl", "pt")
_WORD = re.compile(r"[^\W\d_]+(?:[-'’][^\W\d_]+)*|\d+(?:[.,]\d+)*")
MIN_HITS = 2  # stop words a language needs before it outvotes English


@cache
def stop_words(language: str) -> frozenset[str]:
    """spaCy's stop words for `language` (an ISO 639-1 code of LANGUAGES)."""
    if language not in LANGUAGES:
        raise ValueError(f"no stop words for language {language!r}; one of {LANGUAGES}")
    # The list is read from its file, not imported: importing `spacy.lang.<code>` imports
    # spaCy itself, and a server thread doing so while another loads the analyser gets a
    # partially initialised module. The files are plain word lists in Python syntax.
    spec = importlib.util.find_spec("spacy")
    if spec is None or spec.origin is None:
        raise ImportError("spaCy is not installed: pip install citadel")
    path = Path(spec.origin).parent / "lang" / language / "stop_words.py"
    namespace: dict = {}
    exec(compile(path.read_text("utf-8"), str(path), "exec"), namespace)  # noqa: S102
    return frozenset(w.lower() for w in namespace["STOP_WORDS"])


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def detect_language(text: str) -> str:
    """The language whose stop words the text uses most; English unless another language
    clearly has more (at least MIN_HITS, and more than English)."""
    found = words(text)
    hits = {lang: sum(w in stop_words(lang) for w in found) for lang in LANGUAGES}
    best = max(hits, key=lambda lang: hits[lang])
    return best if best != "en" and hits[best] >= MIN_HITS and hits[best] > hits["en"] else "en"


def lexical_words(text: str, language: str) -> list[str]:
    """The text's words that are not stop words of `language`, in order, each once."""
    stops = stop_words(language)
    return list(dict.fromkeys(w for w in words(text) if w not in stops and len(w) > 1))
