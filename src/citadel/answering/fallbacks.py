"""Honest failure: the fixed, bounded answers given when Citadel cannot answer with evidence.

They say what is missing in the user's own words ("I couldn't find how long refunds take in
the knowledge base"), and suggest a next step. `describe_question` turns a question into the
clause it asks about ("How long do refunds take?" -> "how long refunds take"): a small,
rule-based rewrite that returns None rather than guess when the question has a shape it does
not know; the caller then quotes the question instead.

The question, and any title named here, is the user's or a document's text written outside
the gate: it goes through `text.neutralize` first, so an echo cannot carry a marker.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from citadel.records import Context, SourceRef
from citadel.text.neutralize import neutralize

RETRIEVAL_FAILED = (
    "I can't search the knowledge base right now, so I can't give you a sourced answer."
)
RETRIEVAL_NEXT_STEP = "Please try again in a few minutes; if this keeps happening, contact support."
NO_SOURCES = "No documents in the knowledge base matched the question."

_PRONOUNS = {"i": "you", "my": "your", "me": "you", "mine": "yours", "myself": "yourself",
             "am": "are", "i'm": "you're", "i've": "you've", "i'll": "you'll", "i'd": "you'd"}
_CONTRACTIONS = re.compile(r"\b(what|where|when|how|who|which|that|it)'s\b", re.I)
_POLITE = re.compile(
    r"^(?:(?:please|hi|hello|hey)\b[,!]?\s*"
    r"|(?:can|could|would|will)\s+you\s+(?:please\s+)?(?:tell|let)\s+me(?:\s+know)?\s+"
    r"|(?:do|does)\s+(?:you|anyone)\s+know\s+"
    r"|i(?:'d|\s+would)\s+like\s+to\s+know\s+|i\s+(?:want|need)\s+to\s+know\s+"
    r"|i\s+wonder(?:ed)?\s+|tell\s+me\s+)",
    re.I,
)
_WH = {"how", "what", "which", "where", "when", "who", "whom", "whose", "why"}
_HOW_ADVERBS = {"long", "much", "many", "soon", "often", "far", "old", "quickly", "big",
                "late", "early", "fast"}
_DO = {"do", "does"}
_BE = {"is", "are", "was", "were"}
_MODALS = {"can", "could", "will", "would", "should", "shall", "may", "might", "must",
           "have", "has"}
_AUX = _DO | _BE | _MODALS | {"did"}
_SUBJECT_PRONOUNS = {"i", "you", "we", "they", "he", "she", "it"}
_DETERMINERS = {"the", "a", "an", "my", "your", "our", "their", "this", "that", "these",
                "those", "his", "her", "its", "any", "some", "each", "every"}
# Base-form verbs common in support questions: where a subject ends after do/does/modals.
_VERBS = frozenset("""
    take cost last open close arrive ship work apply mean need include expire go come get
    have accept offer allow happen cover send deliver keep cancel pay buy sell receive contact
    find check delete make give earn redeem collect pick add remove see reach handle do stay
    leave show ask claim qualify renew sign subscribe unsubscribe lose wash fix replace
    provide support speak talk choose print attach book look want know become affect refund
    return change exchange use order track update start end charge match count process be
""".split())  # noqa: SIM905 - a word list reads best as text
# Predicates after is/are: where the subject ends in "is express delivery available".
_PREDICATES = frozenset("""
    open closed available possible free due eligible allowed refundable valid required
    necessary included covered ok okay true late lost damaged faulty missing correct there
    still already too sent paid kept made given taken done shown bought sold told written held
""".split())  # noqa: SIM905 - a word list reads best as text
_PREPOSITIONS = frozenset({"to", "in", "on", "at", "for", "from", "with", "after", "before",
                           "within", "by", "of"})


def _third_person(verb: str) -> str:
    if verb in ("have", "be", "do", "go"):
        return {"have": "has", "be": "is", "do": "does", "go": "goes"}[verb]
    if re.search(r"(?:s|sh|ch|x|z|o)$", verb):
        return verb + "es"
    if re.search(r"[^aeiou]y$", verb):
        return verb[:-1] + "ies"
    return verb + "s"


def _swap(words: Sequence[str]) -> list[str]:
    return [_PRONOUNS.get(w.lower(), w) for w in words]


def _verb_index(rest: Sequence[str]) -> int | None:
    """Index in `rest` of the main verb after a subject that starts at rest[0]."""
    if rest and rest[0].lower() in _SUBJECT_PRONOUNS:
        return 1 if len(rest) > 1 else None
    for i in range(1, len(rest)):
        w = rest[i].lower()
        if w in _VERBS and rest[i - 1].lower() not in _DETERMINERS:
            return i
    return None


def _predicate_index(rest: Sequence[str], prepositions: bool = True) -> int | None:
    """Index in `rest` where the predicate of an is/are question starts. After a wh-word a
    preposition belongs to the subject ("what is the capital of France")."""
    if rest and rest[0].lower() in _SUBJECT_PRONOUNS:
        return 1 if len(rest) > 1 else None
    for i in range(1, len(rest)):
        w = rest[i].lower()
        if (w in _PREDICATES or (prepositions and w in _PREPOSITIONS) or w == "not"
                or w.endswith(("ing", "ed", "able", "ible"))):
            return i
    return None


def _subject(words: Sequence[str], inverted: bool) -> list[str]:
    """Pronoun swap for the subject; an inverted "you" ("do you ship") is the business."""
    if inverted and len(words) == 1 and words[0].lower() == "you":
        return ["we"]
    return _swap(words)


def _clause(aux: str, rest: list[str], wh: bool = False) -> list[str] | None:
    """Subject + verb phrase in statement order: "does delivery take" -> "delivery takes"."""
    aux_l = aux.lower()
    if not rest:
        return None
    if aux_l in _DO:
        i = _verb_index(rest)
        if i is None:
            return None
        subject = _subject(rest[:i], inverted=True)
        verb = rest[i]
        if aux_l == "does":
            verb = _third_person(verb.lower())
        return subject + [verb] + _swap(rest[i + 1:])
    if aux_l in _BE:
        i = _predicate_index(rest, prepositions=not wh)
        if i is None:
            return None
        subject = _subject(rest[:i], inverted=True)
        be = {"am": "are"}.get(aux_l, aux_l)
        if subject == ["you"] and aux_l == "am":
            be = "are"
        return subject + [be] + _swap(rest[i:])
    if aux_l in _MODALS:
        i = _verb_index(rest)
        if i is None:
            return None
        return _subject(rest[:i], inverted=True) + [aux_l] + _swap(rest[i:])
    return None


def describe_question(question: str) -> str | None:
    """The clause a question asks about, addressed to the user, or None if unsure.

    "How long do refunds take?" -> "how long refunds take";
    "Can I change my order?" -> "whether you can change your order";
    "What is the capital of France?" -> "what the capital of France is"."""
    q = neutralize(question)
    q = re.sub(r"[?!.\s]+$", "", q)
    q = re.sub(r",?\s*please$", "", q, flags=re.I)
    while True:
        stripped = _POLITE.sub("", q, count=1)
        if stripped == q:
            break
        q = stripped
    q = _CONTRACTIONS.sub(lambda m: f"{m.group(1)} is", q)
    words = q.split(" ")
    if not words or not words[0]:
        return None
    start = 1 if len(words) > 1 and words[0].lower() in _PREPOSITIONS | {"until"} else 0
    first = words[start].lower()
    if first in _WH:
        n = start + 1
        if first == "how" and len(words) > n and words[n].lower() in _HOW_ADVERBS:
            n += 1
        # "how many days", "what time", "which warehouse": the wh-phrase runs to the aux.
        while n < len(words) and n < start + 4 and words[n].lower() not in _AUX:
            n += 1
        wh = _swap([w.lower() if i == 0 else w for i, w in enumerate(words[:n])])
        if n >= len(words) or words[n].lower() not in _AUX:
            # No inversion: "what happens if my parcel is lost" is already in clause order.
            return " ".join(wh + _swap(words[n:])) if len(words) > 2 else None
        aux = words[n].lower()
        rest = words[n + 1:]
        clause = _clause(aux, rest, wh=True)
        if clause is None and aux in _BE and rest:
            # "what is the capital of France": all of it is the subject
            clause = _subject(rest, inverted=True) + [aux]
        return None if clause is None else " ".join(wh + clause)
    if first in _AUX and first != "did":
        clause = _clause(words[0], words[1:])
        return None if clause is None else " ".join(["whether"] + clause)
    return None


def describe_missing(question: str) -> str:
    """What was not found, for `Answer.missing` and the abstention text."""
    clause = describe_question(question)
    if clause:
        return clause
    q = neutralize(question)
    return f"an answer to “{q}”" if q else "an answer to your question"


def unmentioned_missing(names: Sequence[str]) -> str:
    """What was not found when the question names things the sources never mention."""
    said = [neutralize(n) for n in names]
    listed = said[0] if len(said) == 1 else ", ".join(said[:-1]) + " or " + said[-1]
    return f"anything about {listed}"


def abstention_text(question: str, missing: str | None = None) -> str:
    return f"I couldn't find {missing or describe_missing(question)} in the knowledge base."


def conflict_missing(asked: str) -> str:
    return f"one consistent answer on {asked}: the documents disagree"


def conflict_next_step(titles: Sequence[str]) -> str:
    named = ", ".join(f"“{t}”" for t in map(neutralize, titles) if t) or "these sources"
    return (f"Ask customer support which is current before relying on it. If one of {named} "
            "is out of date, an administrator should update it, retire it, or upload the "
            "current policy.")


def sources_consulted(context: Context) -> tuple[SourceRef, ...]:
    return tuple(
        SourceRef(chunk_id=b.chunk.chunk_id, title=b.chunk.title, source=b.chunk.source,
                  section=b.chunk.section)
        for b in context.blocks
    )
