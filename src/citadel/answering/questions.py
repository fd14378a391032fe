"""Question analysis: what kind of answer a question asks for, and what it must be about.

From the question's parse (`citadel.text.analysis.Analyser.parse`):

* **expected answer type** — who → a person, organisation or group; where → a place; when
  → a date or time; how many / how much → a number, amount or quantity; how long → a
  duration; which/what X → the type of the head noun X ("what century" → a date, "which
  country" → a place, "which king" → a person); what is ... / which X of unknown type → a
  noun phrase (`NOUN`) or any entity; why / how / yes-no → no typed span.
* **focus** — the question's content words (lemmas, stemmed), without the wh-word and the
  head noun that names the answer's type: an answering sentence must be about these.
* **entities** — the names, numbers and dates the question states: an answering sentence
  must state the same ones (a changed year or name is a different question).
* **names** — the proper names the question itself asks about (its main clause, not a
  sentence before it; not values, which are compared as values, nor places and nationalities,
  which sources may write otherwise: Spain lies in "the EU"): "Can I pay with PayPal?" is
  not answered by sources that never mention PayPal, however close their list of cards.
* **negated** — "never", "not", "no": a sentence that asserts the opposite does not answer.

A yes/no question that states a value ("Is the return window 14 days?") asks for the value of
that kind: the stated value is the claim to check, so it is neither focus nor entity.
"""

from __future__ import annotations

import re

from citadel.records import QuestionAnalysis
from citadel.text.analysis import TAG_LETTERS, Parse, Token, rarity
from citadel.text.terms import stem

ANY_ENTITY = ("PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART",
              "LAW", "LANGUAGE", "DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "CARDINAL",
              "ORDINAL")
PERSONS = ("PERSON", "ORG", "NORP")
PLACES = ("GPE", "LOC", "FAC", "ORG")
TIMES = ("DATE", "TIME")
NUMBERS = ("CARDINAL", "QUANTITY", "MONEY", "PERCENT")
VALUES = ("DATE", "TIME", *NUMBERS)

# Head nouns of "which X" / "what X" questions and the entity types that answer them: nouns
# that name a kind of answer (a follow-up "what about the price?" asks for one).
HEAD_KINDS: dict[str, tuple[str, ...]] = {}
for _kinds, _words in (
    (TIMES, "year century decade date day month period era time season week age"),
    (("TIME", "DATE"), "hour minute"),
    (("GPE", "LOC"), "country city state nation town village province region area continent "
                     "island capital place location territory colony county district kingdom "
                     "empire port"),
    (("LOC", "GPE", "FAC"), "river mountain sea ocean lake valley desert coast peninsula"),
    (("FAC", "ORG", "GPE"), "building bridge airport castle palace street road station "
                            "stadium"),
    (("ORG", "NORP", "GPE"), "company organization organisation group party team university "
                             "college school army agency government institution firm "
                             "corporation newspaper church union council parliament court "
                             "committee network bank dynasty navy force movement club"),
    (("PERSON",), "person man woman king queen leader president emperor ruler general author "
                  "writer scientist poet artist player founder inventor chancellor minister "
                  "pope bishop duke prince princess son daughter father mother wife husband "
                  "brother sister officer commander governor khan individual figure scholar "
                  "philosopher composer engineer director explorer monarch"),
    (("NORP", "LANGUAGE"), "nationality religion ethnicity tribe language faith"),
    (("MONEY", "QUANTITY", "CARDINAL"), "cost price amount fee salary budget"),
    (("PERCENT", "CARDINAL"), "percentage percent proportion share"),
    (("CARDINAL", "QUANTITY"), "number population size count total"),
    (("EVENT", "LAW"), "war battle event revolution crisis treaty"),
    (("WORK_OF_ART", "PRODUCT"), "book film song album novel painting poem"),
    (("LAW",), "law act constitution bill"),
):
    for _w in _words.split():
        HEAD_KINDS[_w] = _kinds

_HOW = {
    "many": NUMBERS[:2], "much": NUMBERS, "long": ("DATE", "TIME", "QUANTITY"),
    "old": ("DATE", "CARDINAL"), "far": ("QUANTITY", "CARDINAL"), "big": ("QUANTITY", "CARDINAL"),
    "large": ("QUANTITY", "CARDINAL"), "tall": ("QUANTITY",), "high": ("QUANTITY", "CARDINAL"),
    "often": ("DATE", "TIME", "CARDINAL"), "soon": ("DATE", "TIME"),
    "quickly": ("DATE", "TIME"),
}
_WH = {"who", "whom", "whose", "what", "which", "when", "where", "why", "how"}
# Nouns that do not name the answer's type: "what type of X" is about X.
_LIGHT_HEADS = {"type", "kind", "sort", "form", "name", "part", "one", "term", "word"}
_AUX_START = {"is", "are", "was", "were", "do", "does", "did", "can", "could", "will", "would",
              "should", "shall", "may", "might", "must", "has", "have", "had"}
_NOT_FOCUS = {"name", "call", "type", "kind", "sort", "do", "be", "have", "happen", "use"}
ENTITY_TAGS = ("PROPN", "NUM")
# Places are not required by name: a place can lie inside a region the sources name (Spain
# in "all 27 EU member states", Belfast in "Northern Ireland"), which a reader knows and a
# string match does not; nor are peoples and nationalities, which sources write in other
# forms ("European" for Europe, "Jewish" for Jews). They are left to the reader.
LEFT_TO_THE_READER = ("GPE", "LOC", "NORP")
NAME_KINDS = tuple(k for k in ANY_ENTITY if k not in VALUES + LEFT_TO_THE_READER + ("ORDINAL",))
# A name is a word ("PayPal", "X200", "Wi-Fi"), not a file name or a bracketed marker pasted
# into the question ("legal-handbook.pdf", "【S2】"), which an abstention must not echo.
_NAME_WORD = re.compile(r"[^\W\d_][\w'’-]*")


_SUBORDINATORS = frozenset({"if", "when", "once", "after", "before", "since", "because",
                            "while", "although", "as", "whenever", "unless"})


def main_clause(tokens: tuple[Token, ...]) -> int:
    """Where the question itself starts: after any sentence before it ("I finish at 5:30.
    Can I still ring you?", "I'm in France: how much is delivery?") and after a leading
    subordinate clause ("If I order to Germany, will I pay duty?")."""
    start = 0
    for i, t in enumerate(tokens[:-1]):
        if t.text in (".", "!", "?", ":", ";"):
            start = i + 1
    if start < len(tokens) and tokens[start].text.lower() in _SUBORDINATORS:
        comma = next((i for i in range(start + 1, len(tokens) - 1) if tokens[i].text == ","),
                     None)
        if comma is not None:
            start = comma + 1
    return start


def _wh_index(tokens: tuple[Token, ...]) -> int | None:
    """The question word of the main clause; None for a yes/no question, whose main clause
    starts with an auxiliary ("will I have to pay duty when it arrives?")."""
    start = main_clause(tokens)
    if start < len(tokens) and tokens[start].text.lower() in _AUX_START:
        return None
    for i in range(start, len(tokens)):
        if tokens[i].text.lower() in _WH:
            return i
    return None


def _head_after(tokens: tuple[Token, ...], i: int) -> int | None:
    """Index of the noun a wh-determiner governs: "what [large] century", "which country",
    "what type of government" -> government."""
    j = i + 1
    while j < len(tokens) and tokens[j].pos in ("ADJ", "ADV", "DET") and j < i + 3:
        j += 1
    if j >= len(tokens) or tokens[j].pos not in ("NOUN", "PROPN"):
        return None
    if (tokens[j].lemma in _LIGHT_HEADS and j + 2 < len(tokens)
            and tokens[j + 1].text.lower() == "of"):
        nested = _head_after(tokens, j + 1)
        return nested if nested is not None else j
    return j


def _names(parse: Parse, start: int, skip: set[int]) -> list[str]:
    """The main clause's names as written, adjacent words joined ("Lake District")."""
    runs: list[tuple[int, int]] = []
    last = -2
    for k, t in enumerate(parse.tokens[start:], start):
        if (k not in skip and (t.pos == "PROPN" or t.entity in NAME_KINDS)
                and t.entity not in VALUES + LEFT_TO_THE_READER and not t.stop
                and _NAME_WORD.fullmatch(t.text) and len(t.text) > 1
                and t.text.lower() not in _WH):
            if k == last + 1:
                runs[-1] = (runs[-1][0], t.end)
            else:
                runs.append((t.start, t.end))
            last = k
    return [parse.text[a:b] for a, b in runs]


def frame(tokens: tuple[Token, ...]) -> frozenset[int]:
    """The words that say what kind of answer is asked rather than what it is about: the
    question word, the word after "how" ("long" in "how long"), and the noun after which/what
    or how many/much ("which country", "how many days")."""
    i = _wh_index(tokens)
    if i is None:
        return frozenset()
    word = tokens[i].text.lower()
    nxt = tokens[i + 1].text.lower() if i + 1 < len(tokens) else ""
    head = None
    out = {i}
    if word == "how" and nxt in _HOW:
        out.add(i + 1)
        if nxt in ("many", "much"):
            head = _head_after(tokens, i + 1)
    elif word in ("what", "which"):
        head = _head_after(tokens, i)
    return frozenset(out if head is None else out | {head})


def analyse_question(parse: Parse) -> QuestionAnalysis:
    tokens = parse.tokens
    i = _wh_index(tokens)
    wh, expected, head_index = "other", (), None
    start = main_clause(tokens)
    if i is None:
        if start < len(tokens) and tokens[start].text.lower() in _AUX_START:
            wh = "yes/no"
    else:
        word = tokens[i].text.lower()
        nxt = tokens[i + 1].text.lower() if i + 1 < len(tokens) else ""
        if word in ("who", "whom", "whose"):
            wh, expected = "who", PERSONS
        elif word == "when":
            wh, expected = "when", TIMES
        elif word == "where":
            wh, expected = "where", PLACES
        elif word == "why":
            wh = "why"
        elif word == "how":
            if nxt in _HOW:
                wh = f"how {nxt}" if nxt in ("many", "much", "long") else "how much"
                expected = _HOW[nxt]
                head_index = _head_after(tokens, i + 1) if nxt in ("many", "much") else None
                if head_index is not None:  # "how many days": a duration, counted
                    expected = (*HEAD_KINDS.get(tokens[head_index].lemma, ()), *expected)
            else:
                wh = "how"
        else:  # what / which
            wh = word
            head_index = _head_after(tokens, i)
            if head_index is not None:
                head = tokens[head_index].lemma
                expected = HEAD_KINDS.get(head, ("NOUN", *ANY_ENTITY))
            else:
                expected = ("NOUN", *ANY_ENTITY)
    head = tokens[head_index].lemma if head_index is not None else None
    skip = set(frame(tokens))  # "long" in "how long" says what kind of answer, not about what
    if wh == "yes/no":
        # "Is the return window 14 days?": the stated value is the claim to check, not the
        # focus; a sentence stating the window's real value answers (no).
        claimed = [sp for sp in parse.spans if sp.kind in VALUES]
        expected = tuple(dict.fromkeys(sp.kind for sp in claimed))
        skip |= {k for k, t in enumerate(tokens) for sp in claimed
                 if sp.start <= t.start < sp.end}
    focus: dict[str, tuple[str, float]] = {}
    for k, t in enumerate(tokens):
        if k in skip:
            continue
        function_word = t.stop or t.pos in (
            "PUNCT", "SYM", "SPACE", "DET", "AUX", "PRON", "ADP", "CCONJ", "SCONJ", "PART")
        if function_word and not (t.pos == "NUM" or t.text[:1].isdigit()):
            continue
        if t.text.lower() in _WH or t.lemma in _NOT_FOCUS:
            continue
        focus.setdefault(stem(t.lemma), (TAG_LETTERS.get(t.pos, "O"), rarity(t.lemma)))
    entities = [stem(t.lemma) for k, t in enumerate(tokens)
                if k not in skip and (t.pos in ENTITY_TAGS or t.entity in ANY_ENTITY)
                and not t.stop and t.text.lower() not in _WH and t.text[:1].isalnum()]
    names = _names(parse, start, skip)
    negated = any(t.dep == "neg" or t.text.lower() in ("not", "never", "no", "n't", "without")
                  for t in tokens)
    return QuestionAnalysis(wh=wh, expected=tuple(expected), head=head,
                            focus=tuple(focus), tags="".join(t for t, _ in focus.values()),
                            rarity=tuple(round(r, 4) for _, r in focus.values()),
                            entities=tuple(dict.fromkeys(entities)),
                            names=tuple(dict.fromkeys(names)), negated=negated)
