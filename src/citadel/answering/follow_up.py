"""Follow-up questions: the question one turn of a conversation asks, standing alone.

Customers ask in threads: "How much does UK express delivery cost?", then "And standard
delivery?", then "How long does that take?". Before retrieval a follow-up is rewritten into a
question that stands alone (`standalone`), so that retrieval, the judgement, the gate and an
abstention's words ("I couldn't find …") all see what is really asked. The offline rules read
the follow-up's parse and the PREVIOUS STANDALONE question (each earlier turn made to stand
alone in turn), as `answering.questions` reads a question: its frame (the question word and
what it asks for), its focus (the first chain of noun groups: "the warranty on gear") and the
names, places and values it states.

* **kept** — no earlier turn; a question in another language; or a question that stands
  alone: a clause with no pronoun pointing back. A full question with its own subject is
  never rewritten ("What is the capital of France?" mid-thread stays as it is).
* **a fragment** ("And standard delivery?", "What about the Pro?", "And for the EU?") is
  read piece by piece, each noun group replacing what it matches in the previous question:
  a place, date or amount replaces one of the same kind ("UK" → "EU"), or is added ("… in
  the EU") when there is none; a group with the head noun of one there replaces that group's
  words of the same kind ("UK express delivery" + "standard delivery" → "UK standard
  delivery"); a noun naming an attribute ("the price") asks for it of the previous focus; any
  other group takes the place of the focus's last group ("the warranty on gear" +
  "clothing" → "the warranty on clothing").
* **pronouns and "there"** ("How long does that take?", "Is express available there?") are
  replaced by the previous focus, or its place. "it" before "to …" in a question with its
  own subject ("Is it possible to return sale items?") points at nothing and is left alone.
* **a bare question phrase** ("How long?", "Which days?") is put before a previous yes/no
  question ("How long can I freeze my membership?"), in the place of a previous "when", or
  else asked of the previous focus; an amount ("How much?") of what the verb acts on.
* **a changed condition** ("And if it's going to Spain?", "What's the limit if we move up to
  Pro?", "Does that change on the Enterprise plan?", "I'm in Ireland, same deal for me?"):
  each new place, name or noun group takes the place of its match in the previous question
  (or is added); an "if" clause that swaps nothing is added as written, after the noun group
  before it put in ("And the fee if we cancel early?"). A clause before "if" that asks for
  itself ("Can I get a refund if …?") stands alone.
* **a fragment opening with a preposition** that matches nothing ("And for students?") is
  added to the previous question whole.

When a language model is configured it may rewrite instead (`model`), and its rewrite is
taken only if every content word of it comes from the conversation's questions; else the
rules decide. Only the earlier USER questions are read: an assistant's text (which could hold
made-up `[S1]` markers, quotes or instructions) never contributes a word, and a system
message is never passed here at all. The standalone question is the only thing history
changes: citations still come from this turn's retrieval alone, through the gate.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from citadel.answering.prompts import Prompt, load_prompt
from citadel.answering.questions import HEAD_KINDS, NUMBERS, PLACES, TIMES, frame, main_clause
from citadel.records import Standalone
from citadel.text.analysis import Parse, Token
from citadel.text.language import detect_language
from citadel.text.terms import STOPWORDS, content_terms, stem, tokens

MAX_TURNS = 8  # earlier turns a request may carry
MAX_ANSWER_CHARS = 4000  # of an earlier answer's text (counted, never read)
PROMPT_VERSION = "follow-up-v1"

Parser = Callable[[str], Parse]
# A language model's reply to chat messages, or None when there is none to ask.
Model = Callable[[list[dict[str, str]]], str | None]

_OPENERS = frozenset({"and", "but", "also", "so", "then", "ok", "okay", "plus", "now"})
_SWAPS = frozenset({"about", "of"})  # "what about X", "how about X", "what of X"
_WH = frozenset({"who", "whom", "whose", "what", "which", "when", "where", "why", "how"})
_POINTERS = frozenset({"it", "that", "this", "they", "them", "those", "these"})
_PLURAL_POINTERS = frozenset({"they", "them", "those", "these"})
_DEMONSTRATIVES = frozenset({"that", "this", "those", "these"})
_POSSESSIVES = frozenset({"its", "their"})
_PERSONAL = frozenset({"i", "you", "we", "he", "she", "me", "us", "him", "her"})
# Prepositions that join noun groups into one focus: "the warranty on gear".
_LINKS = frozenset({"of", "on", "for", "to", "in", "from", "over", "under", "with", "at",
                    "within", "outside", "inside", "by"})
_NAMING = frozenset({"NOUN", "PROPN", "NUM"})
_NOT_NOMINAL = frozenset({"PUNCT", "SPACE", "ADP", "DET", "CCONJ", "SCONJ", "PRON", "AUX",
                          "PART", "INTJ"})
_CURRENCY = frozenset({"£", "$", "€", "¥"})
# Verbs whose "it" is the doing of what the previous question asked to do.
_OF_DOING = frozenset({"take", "cost"})
# What opens a changed condition: "And if it's going to Spain?", "And the fee if we cancel?".
_IF = frozenset({"if", "unless", "once"})
# Words that ask the same question again under another condition: "Does that change on the
# Enterprise plan?", "I'm in Ireland, same deal for me?", "Does the same apply in Scotland?".
_AGAIN = frozenset({"same", "change", "apply", "deal", "different", "differ", "go", "hold",
                    "true", "work", "still", "also", "be", "do"})


def standalone(question: str, earlier: Sequence[str], parse: Parser, *,
               model: Model | None = None, max_chars: int | None = None) -> Standalone:
    """`question` made to stand alone from the `earlier` user questions (oldest first)."""
    kept = Standalone(question=question, original=question, how="kept", turns_used=0)
    if not earlier or detect_language(question) != "en":
        return kept
    asked = parse(question)
    if _reading(asked) is None:
        return kept
    how = "rules"
    text = _by_model(question, earlier, model) if model is not None else None
    if text is not None:
        how = "model"
    else:
        text = rewrite(asked, _previous(earlier, parse), parse)
    if text is None or text.strip() == question.strip() or (max_chars and len(text) > max_chars):
        return kept
    return Standalone(question=text, original=question, how=how,
                      turns_used=turns_reached(text, question, earlier))


def rewrite(asked: Parse, previous: Parse, parse: Parser) -> str | None:
    """The follow-up `asked` as a question standing alone, read against the `previous`
    standalone question; None when it stands alone or nothing in it can be resolved."""
    reading = _reading(asked)
    if reading == "condition":
        return _conditional(asked, previous, parse)
    if reading in ("again", "pointers") and _again(asked):
        text = _again_under(asked, previous, parse)
        if text is not None or reading == "again":
            return text
    if reading == "fragment":
        return _fill(asked, previous, parse)
    if reading == "wh":
        return _ask_of_focus(asked, previous)
    if reading == "pointers":
        return _resolve_pointers(asked, previous)
    return None


def asked_about(question: str, parse: Parser) -> tuple[str, ...]:
    """A fragment's own words ("weather" in "What about the weather?"), as written: what the
    follow-up asks about. Empty for any other question."""
    asked = parse(question)
    if _reading(asked) != "fragment":
        return ()
    body = asked.text[asked.tokens[_body(asked.tokens)].start:]
    return tuple(dict.fromkeys(w for w in tokens(body) if w not in STOPWORDS))


def turns_reached(text: str, question: str, earlier: Sequence[str]) -> int:
    """How many earlier turns back the words of `text` that `question` lacks were found."""
    own = set(content_terms(question))
    reach = 0
    for word in set(content_terms(text)) - own:
        for back, turn in enumerate(reversed(earlier), start=1):
            if word in content_terms(turn):
                reach = max(reach, back)
                break
    return reach


def from_conversation(text: str, questions: Sequence[str]) -> bool:
    """Every content word of `text` is a word of one of `questions`."""
    said = {w for q in questions for w in content_terms(q)}
    return bool(content_terms(text)) and set(content_terms(text)) <= said


# --- which kind of follow-up ----------------------------------------------------------------


def _body(tokens: tuple[Token, ...]) -> int:
    """Where the question proper starts: after an earlier sentence, and after openers such
    as "and", "but", "what about"."""
    k = main_clause(tokens)
    while k < len(tokens) and (tokens[k].text.lower() in _OPENERS or tokens[k].text == ","):
        k += 1
    if (k + 1 < len(tokens) and tokens[k].text.lower() in ("what", "how")
            and tokens[k + 1].text.lower() in _SWAPS):
        k += 2
    return k


def _punct(t: Token) -> bool:
    """Punctuation, however the tagger read it (it tags a final "?" a noun at times)."""
    return t.pos in ("PUNCT", "SPACE") or (
        not any(c.isalnum() for c in t.text) and t.text not in _CURRENCY)


def _reading(asked: Parse) -> str | None:
    """fragment ("And standard delivery?"), wh ("How long?"), pointers ("How long does that
    take?"), or None: the question stands alone."""
    tokens = asked.tokens
    rest = [k for k in range(_body(tokens), len(tokens)) if not _punct(tokens[k])]
    if not rest:
        return None
    if _condition(tokens) is not None:
        return "condition"
    if not any(_verb(tokens, k) for k in rest):
        return "wh" if any(tokens[k].text.lower() in _WH for k in rest) else "fragment"
    if _pointers(asked):
        return "pointers"
    return "again" if _again(asked) else None


def _condition(tokens: tuple[Token, ...]) -> int | None:
    """Where a follow-up's "if" clause starts, when what comes before it is short of a
    question: nothing, "what", a noun group, or a wh-question that may repeat the previous
    one ("What's the limit if we move up to Pro?")."""
    k = _body(tokens)
    cut = next((j for j in range(k, len(tokens)) if tokens[j].text.lower() in _IF), None)
    if cut is None:
        return None
    head = [t for t in tokens[k:cut] if not _punct(t)]
    if head and head[0].pos == "AUX":
        return None  # "Can I get a refund if I cancel early?" asks for itself
    return cut


def _again(asked: Parse) -> bool:
    """"Same deal for me?", "Does that change on X?": words of asking again, a pointer or
    "same", and a noun group."""
    words = {t.lemma.lower() for t in asked.tokens}
    return bool(words & {"same", "change", "apply", "differ", "different"}) and bool(
        _groups(asked, 0))


def _verb(tokens: tuple[Token, ...], k: int) -> bool:
    t = tokens[k]
    if t.entity in TIMES:  # the tagger reads "days" in "Which days?" as a verb at times
        return False
    return t.pos == "AUX" or (t.pos == "VERB" and not _attributive(tokens, k))


def _attributive(tokens: tuple[Token, ...], k: int) -> bool:
    """A verb form used as a noun's modifier: "opened items", and "express delivery" where
    nothing else can be the verb (no auxiliary: "Can I return sale items?" has one)."""
    t = tokens[k]
    if k + 1 >= len(tokens) or tokens[k + 1].pos not in ("NOUN", "PROPN", "ADJ"):
        return False
    return t.tag in ("VBN", "VBG") or (
        t.tag == "VB" and not any(u.pos == "AUX" for u in tokens[main_clause(tokens):]))


# --- noun groups --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Group:
    """A noun group: tokens [first, end), its determiner (if `det`) and its head noun."""

    first: int
    head: int
    end: int
    det: bool


def _final_verb(tokens: tuple[Token, ...]) -> tuple[int, int] | None:
    """"does" and the main verb of "How much does <noun group> cost?": the clause's last
    word, after a subject that is not a person. The tagger often reads the group's first word
    as the verb ("express" in "does express delivery cost"): this shape says which word is."""
    framed = frame(tokens)
    if not framed:
        return None
    aux = max(framed) + 1
    if aux + 1 >= len(tokens) or tokens[aux].lemma != "do":
        return None
    if tokens[aux + 1].text.lower() in _PERSONAL or tokens[aux + 1].pos == "PRON":
        return None
    last = max((k for k in range(aux + 1, len(tokens)) if not _punct(tokens[k])),
               default=None)
    if last is None or last <= aux + 1 or tokens[last].pos not in ("VERB", "NOUN"):
        return None
    return None if tokens[last].entity else (aux, last)


def _nominal(tokens: tuple[Token, ...], k: int, loose: range) -> bool:
    t = tokens[k]
    if t.tag == "HYPH" and 0 < k < len(tokens) - 1:  # "gluten-free croissants"
        return True
    if t.text.lower() in _WH or _punct(t):
        return False
    if t.pos in _NAMING or t.pos == "ADJ" or (t.entity and t.pos not in _NOT_NOMINAL):
        return True
    if t.text in _CURRENCY and k + 1 < len(tokens) and tokens[k + 1].pos == "NUM":
        return True
    if t.pos == "VERB" and _attributive(tokens, k):
        return True
    return k in loose and t.pos not in _NOT_NOMINAL


def _groups(asked: Parse, lo: int = 0, skip: frozenset[int] = frozenset()) -> list[_Group]:
    """The noun groups of `asked` from token `lo` on, left to right; `skip`: words that are
    not part of any (the question's frame)."""
    tokens = asked.tokens
    # Between "does" and the final verb every content word belongs to the subject.
    loose = range(0)
    if (found := _final_verb(tokens)) is not None:
        aux, verb = found
        skip, loose = skip | {verb}, range(aux + 1, verb)
    out: list[_Group] = []
    k = lo
    while k < len(tokens):
        first = k
        det = tokens[k].pos == "DET" or tokens[k].tag == "PRP$"
        j = k + 1 if det else k
        run = j
        while run < len(tokens) and run not in skip and _nominal(tokens, run, loose):
            run += 1
        naming = [m for m in range(j, run) if tokens[m].pos in _NAMING or tokens[m].entity]
        if naming:
            head = naming[-1]  # a trailing adjective is said of the group, not part of it
            out.append(_Group(first, head, head + 1, det))
            k = head + 1
        else:
            k = max(run, k + 1)
    return out


def _chains(asked: Parse, groups: list[_Group]) -> list[list[_Group]]:
    """Groups joined by one linking preposition ("the warranty on gear")."""
    chains: list[list[_Group]] = []
    tokens = asked.tokens
    for g in groups:
        if chains:
            last = chains[-1][-1]
            between = range(last.end, g.first)
            if (len(between) == 1 and tokens[last.end].pos == "ADP"
                    and tokens[last.end].text.lower() in _LINKS):
                chains[-1].append(g)
                continue
        chains.append([g])
    return chains


def _text(asked: Parse, first: int, end: int) -> str:
    return asked.text[asked.tokens[first].start:asked.tokens[end - 1].end]


@dataclass(frozen=True)
class _Focus:
    """What the previous question is about: its first chain of noun groups."""

    text: str
    plural: bool
    groups: tuple[_Group, ...]


def _focus(previous: Parse, *, after_verb: bool = False) -> _Focus | None:
    """The first chain of noun groups; with `after_verb`, the first after the main verb when
    there is one (what "Does the bank offer overdrafts?" asks about is the overdrafts)."""
    tokens = previous.tokens
    start = main_clause(tokens)
    chains = _chains(previous, _groups(previous, start, frame(tokens)))
    if after_verb:
        verbs = [k for k in range(start, len(tokens)) if tokens[k].pos == "VERB"
                 and not _attributive(tokens, k)]
        if verbs:
            chains = [c for c in chains if c[0].first > verbs[0]] or chains
    if not chains:
        return None
    chain = chains[0]
    text = _text(previous, chain[0].first, chain[-1].end)
    if chain[0].first == 0 and tokens[0].pos != "PROPN":
        text = text[:1].lower() + text[1:]
    return _Focus(text, tokens[chain[0].head].tag in ("NNS", "NNPS"), tuple(chain))


# --- kinds of names and values ------------------------------------------------------------


def _kind(entity: str) -> str | None:
    if entity in PLACES or entity == "NORP":
        return "place"
    if entity in TIMES:
        return "time"
    if entity in NUMBERS:
        return "number"
    return "name" if entity else None


def _word_kind(t: Token) -> str:
    return _kind(t.entity) or "other"


def _entity_spans(asked: Parse, kind: str) -> list[tuple[int, int]]:
    """Token ranges of the names or values of `kind`, with a determiner before one."""
    tokens = asked.tokens
    spans: list[tuple[int, int]] = []
    k = main_clause(tokens)
    while k < len(tokens):
        t = tokens[k]
        if t.entity and _kind(t.entity) == kind and t.pos not in ("DET", "ADP", "PUNCT"):
            end = k + 1
            while end < len(tokens) and tokens[end].entity == t.entity:
                end += 1
            first = k - 1 if k and tokens[k - 1].pos == "DET" else k
            spans.append((first, end))
            k = end
        else:
            k += 1
    return spans


def _the(place: str) -> str:
    """"the EU", "the UK": an acronym of a place takes the article."""
    return f"the {place}" if place.isupper() and len(place) > 1 else place


# --- fragments ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Piece:
    """One noun group of a fragment, with the preposition before it."""

    text: str  # the group with its determiner
    det: str
    mods: tuple[tuple[str, str], ...]  # (text, kind) of the words before the head
    head: str
    lemma: str
    entity: str  # the head's entity label ("" for none)
    prep: str | None
    rest: str = ""  # the groups linked after it ("of France" in "the capital of France")

    @property
    def kind(self) -> str | None:
        """place, time, number or name: the kind of name or value the head is, if any."""
        return _kind(self.entity)


def _pieces(asked: Parse, lo: int | None = None, hi: int | None = None) -> list[list[_Piece]]:
    """The fragment's noun groups (those in tokens [lo, hi)), chain by chain."""
    tokens = asked.tokens
    lo = _body(tokens) if lo is None else lo
    hi = len(tokens) if hi is None else hi
    out = []
    for chain in _chains(asked, [g for g in _groups(asked, lo) if g.end <= hi]):
        pieces = []
        for g in chain:
            before = tokens[g.first - 1] if g.first else None
            prep = before.text.lower() if before is not None and before.pos == "ADP" else None
            body = g.first + 1 if g.det else g.first
            pieces.append(_Piece(
                text=_text(asked, g.first, g.end), det=tokens[g.first].text if g.det else "",
                mods=tuple((tokens[m].text, _word_kind(tokens[m]))
                           for m in range(body, g.head)),
                head=_text(asked, g.head, g.end), lemma=tokens[g.head].lemma,
                entity=tokens[g.head].entity, prep=prep,
                rest=asked.text[tokens[g.end - 1].end:tokens[chain[-1].end - 1].end]))
        out.append(pieces)
    return out


def _fill(asked: Parse, previous: Parse, parse: Parser) -> str | None:
    """Each piece of the fragment put into the previous question in turn; a piece that takes
    the place of a group brings its chain along ("the capital of France"). A fragment that
    opens with a preposition and matches nothing is added whole ("How much is the gym
    membership?" + "And for students?" → "… for students?")."""
    if _adds_to(asked, previous):
        body = asked.text[asked.tokens[_body(asked.tokens)].start:].rstrip().rstrip("?")
        return f"{_bare(previous)} {body.rstrip()}?"
    current, changed = previous, False
    for chain in _pieces(asked):
        for piece in chain:
            text, whole = _put(piece, current)
            if text is not None:
                current, changed = parse(text), True
            if whole:
                break
    return current.text if changed else None


def _adds_to(asked: Parse, previous: Parse) -> bool:
    """A fragment such as "And for someone on the EU site?": it opens with a preposition, no
    group of it matches one of the previous question (by kind or head noun), and the
    preposition is not the one before the focus's last group ("on gear" + "And on
    clothing?" swaps)."""
    tokens = asked.tokens
    k = _body(tokens)
    focus = _focus(previous)
    if k >= len(tokens) or tokens[k].pos != "ADP" or focus is None:
        return False
    pieces = [p for chain in _pieces(asked) for p in chain]
    if not pieces or any(p.kind is not None or _same_head(p, previous) for p in pieces):
        return False
    last = focus.groups[-1].first
    return not (last and previous.tokens[last - 1].text.lower() == tokens[k].text.lower())


def _same_head(piece: _Piece, previous: Parse) -> list[_Group]:
    """The previous question's groups with the piece's head noun."""
    groups = _groups(previous, main_clause(previous.tokens), frame(previous.tokens))
    return [g for g in groups if stem(previous.tokens[g.head].lemma) == stem(piece.lemma)]


def _bare(previous: Parse) -> str:
    """The previous question without its question mark."""
    return previous.text.rstrip().rstrip("?").rstrip()


def _put(piece: _Piece, previous: Parse) -> tuple[str | None, bool]:
    """The previous question with `piece` in the place of what it matches, and whether the
    piece's chain went in with it."""
    text = _put_entity(piece, previous)
    if text is not None:
        return text, False
    focus = _focus(previous)
    whole = piece.text + piece.rest
    if (focus is not None and len(focus.groups) > 1 and piece.det and not piece.rest
            and _names_a_value(previous.tokens[focus.groups[0].head].lemma)
            and not _same_head(piece, previous)):
        # "What's the notice period on the Pro plan?" + "And the fee?": the fee on the plan.
        first = focus.groups[0]
        return _replace(previous, first.first, first.end, piece.text.lower()
                        if piece.det[:1].isupper() else piece.text), True
    if _names_a_value(piece.lemma) and not piece.mods and not piece.rest:
        if focus is None:
            return None, True
        det = "the" if piece.det.lower() in ("", *_POSSESSIVES) else piece.det.lower()
        return f"What is {det} {piece.head} of {focus.text}?", True
    same = _same_head(piece, previous)
    if same:
        return _merge(piece, previous, same[-1]), False
    if focus is None:
        return None, True
    # One group takes the place of the focus's last ("the warranty on gear" + "clothing");
    # a chain of its own, of the whole focus ("the price of repairs").
    first = focus.groups[-1] if not piece.rest else focus.groups[0]
    return _replace(previous, first.first, focus.groups[-1].end, whole), True


def _put_entity(piece: _Piece, previous: Parse) -> str | None:
    """A place, date or amount in the place of one of its kind, or added."""
    if piece.kind is not None:
        spans = _entity_spans(previous, piece.kind)
        if spans:
            return _swap_entity(previous, spans[-1], piece)
        # An organisation's name ("the Pro") is no place to add "in" before.
        located = piece.prep is not None or piece.entity in ("GPE", "LOC", "FAC")
        if piece.kind in ("time", "number") or (piece.kind == "place" and located):
            return _append(previous, piece)
    return None


def _names_a_value(lemma: str) -> bool:
    """A noun that names an attribute with a value: "price", "cost", "time", "size"."""
    return any(k in NUMBERS or k in TIMES for k in HEAD_KINDS.get(lemma, ()))


def _swap_entity(previous: Parse, span: tuple[int, int], piece: _Piece) -> str:
    """"UK" → "EU": a name before a noun ("UK delivery") takes no article; one standing
    alone keeps the piece's, or an acronym's "the" ("ship to the US")."""
    first, end = span
    tokens = previous.tokens
    bare = piece.text[len(piece.det):].strip() if piece.det else piece.text
    modifier = any(g.first <= first and end <= g.head
                   for g in _groups(previous, main_clause(tokens), frame(tokens)))
    if modifier:
        text = bare
    else:
        text = piece.text if piece.det else (_the(bare) if piece.kind == "place" else bare)
    return _replace(previous, first, end, text)


def _merge(piece: _Piece, previous: Parse, group: _Group) -> str:
    """The group with the piece's words in place of its words of the same kinds."""
    tokens = previous.tokens
    body = group.first + 1 if group.det else group.first
    given = {kind for _, kind in piece.mods}
    kept = [(tokens[m].text, _word_kind(tokens[m])) for m in range(body, group.head)
            if _word_kind(tokens[m]) not in given]
    words = sorted([*kept, *piece.mods], key=lambda w: w[1] == "other")  # names first
    det = piece.det if (piece.det or piece.mods) else (tokens[group.first].text
                                                       if group.det else "")
    text = " ".join(w for w in (det, *(t for t, _ in words), piece.head) if w)
    return _replace(previous, group.first, group.end, text)


def _append(previous: Parse, piece: _Piece) -> str:
    prep = piece.prep or {"place": "in", "number": "for"}.get(
        piece.kind or "", "in" if any(c.isdigit() for c in piece.head) else "on")
    text = _the(piece.text) if piece.kind == "place" and not piece.det else piece.text
    return f"{previous.text.rstrip().rstrip('?').rstrip()} {prep} {text}?"


def _replace(previous: Parse, first: int, end: int, text: str) -> str:
    tokens = previous.tokens
    out = previous.text[:tokens[first].start] + text + previous.text[tokens[end - 1].end:]
    return out[:1].upper() + out[1:]


# --- a changed condition ------------------------------------------------------------------


def _conditional(asked: Parse, previous: Parse, parse: Parser) -> str | None:
    """"And if it's going to Spain?", "And the fee if we cancel early?": the previous
    question (with the noun group before "if" put in, or when a wh-question before it only
    repeats the previous in fewer words), under the condition. A name or place the
    condition states takes the place of one of the previous question; else the condition is
    added as written."""
    tokens = asked.tokens
    cut = _condition(tokens)
    if cut is None:
        return None
    k = _body(tokens)
    head = [j for j in range(k, cut) if not _punct(tokens[j])
            and tokens[j].text.lower() not in ("what", "how")]
    base = previous
    if head:
        said = set(content_terms(previous.text))
        mine = set(content_terms(_text(asked, k, cut)))
        if any(_verb(tokens, j) for j in head):
            if not mine < said:  # a question of its own
                return None
        else:
            filled = _fill(parse(_text(asked, head[0], head[-1] + 1) + "?"), previous, parse)
            if filled is None:
                return None
            base = parse(filled)
    text = _put_all(asked, base, parse, cut)
    if text is not None:
        return text
    end = max(j for j in range(len(tokens)) if not _punct(tokens[j])) + 1
    return f"{_bare(base)} {_text(asked, cut, end)}?"


def _again_under(asked: Parse, previous: Parse, parse: Parser) -> str | None:
    """"I'm in Ireland, same deal for me?": every word is of asking again, of the previous
    question or of a new noun group; each new group is put into the previous question."""
    said = {stem(t.lemma.lower()) for t in previous.tokens}
    for t in asked.tokens:
        w = t.lemma.lower()
        if (not _punct(t) and w not in STOPWORDS and w not in _AGAIN and w not in _OPENERS
                and t.pos not in ("PRON", "DET", "ADP", "AUX", "NOUN", "PROPN", "NUM")
                and stem(w) not in said):
            return None
    return _put_all(asked, previous, parse, 0, append=True)


def _put_all(asked: Parse, previous: Parse, parse: Parser, lo: int, *,
             append: bool = False) -> str | None:
    """The new noun groups of `asked` from token `lo` on put into `previous`: a place, date
    or amount in the place of one of its kind (or added), a group with a head noun of the
    previous in the place of that group, a name in the place of a name; with `append`, any
    other group with a preposition is added ("… in Scotland")."""
    said = {stem(t.lemma.lower()) for t in previous.tokens}
    current, changed = previous, False
    for chain in _pieces(asked, lo):
        for piece in chain:
            if stem(piece.lemma.lower()) in said and not piece.mods:
                continue
            text = _put_entity(piece, current)
            if text is None and (same := _same_head(piece, current)):
                text = _merge(piece, current, same[-1])
            if text is None:
                text = _put_name(piece, current)
            if text is None and append and piece.prep:
                text = f"{_bare(current)} {piece.prep} {piece.text}?"
            if text is not None:
                current, changed = parse(text), True
    return current.text if changed else None


def _put_name(piece: _Piece, previous: Parse) -> str | None:
    """A bare name ("Pro") in the place of a capitalised word naming a group of the previous
    question ("the Basic plan" → "the Pro plan")."""
    if piece.mods or not piece.head[:1].isupper():
        return None
    tokens = previous.tokens
    for g in _groups(previous, main_clause(tokens), frame(tokens)):
        for m in range(g.first + (1 if g.det else 0), g.head):
            if m and tokens[m].text[:1].isupper() and tokens[m].pos in ("PROPN", "ADJ", "NOUN"):
                return _replace(previous, m, m + 1, piece.head)
    return None


# --- a bare question phrase, pronouns ----------------------------------------------------


def _ask_of_focus(asked: Parse, previous: Parse) -> str | None:
    """A bare question phrase asked of the previous question. An amount ("How much?") is
    asked of what it was about: "How much is personal training?". Any other phrase ("How
    long?", "What time?", "Which days?") asks when, how long … the previous question holds:
    put before a yes/no question ("How long can I freeze my membership?"), or in the place of
    a when-question's own ("When is the bakery open?" → "On which days is the bakery
    open?"); else it is asked of the focus ("How long is UK standard delivery?")."""
    tokens = asked.tokens
    words = [t for t in tokens[_body(tokens):] if not _punct(t)]
    if not words:
        return None
    phrase = asked.text[words[0].start:words[-1].end]
    amount = words[0].text.lower() == "how" and len(words) > 1 and words[1].text.lower() in (
        "much", "many")
    if not amount:
        if words[0].text.lower() in ("which", "what") and words[-1].entity == "DATE":
            phrase = f"on {phrase[:1].lower()}{phrase[1:]}"  # "On which days do you …?"
        clause = _yes_no_clause(previous) or _when_clause(previous)
        if clause is not None:
            return f"{phrase[:1].upper()}{phrase[1:]} {clause}?"
    focus = _focus(previous, after_verb=amount)
    if focus is None:
        return None
    # "Is there a fee for …?" + "How much?": how much the fee is.
    text = re.sub(r"^an? ", "the ", focus.text)
    return f"{phrase[:1].upper()}{phrase[1:]} {'are' if focus.plural else 'is'} {text}?"


def _yes_no_clause(previous: Parse) -> str | None:
    """A yes/no question from its auxiliary on, first letter lowered: "you bake rye bread"
    in "Do you bake rye bread?"."""
    tokens = previous.tokens
    start = main_clause(tokens)
    if start >= len(tokens) or tokens[start].pos != "AUX" or frame(tokens):
        return None
    return _question_from(previous, start)


def _when_clause(previous: Parse) -> str | None:
    """A when-question after its "when": "is the bakery open" in "When is the bakery
    open?"; None for any other question word (its verb may belong to it: "How much does it
    cost?")."""
    tokens = previous.tokens
    framed = frame(tokens)
    if len(framed) != 1 or tokens[min(framed)].text.lower() != "when":
        return None
    k = min(framed) + 1
    return _question_from(previous, k) if k < len(tokens) else None


def _question_from(previous: Parse, k: int) -> str:
    text = previous.text[previous.tokens[k].start:].rstrip().rstrip("?").rstrip()
    first = previous.tokens[k]
    return text if first.pos == "PROPN" or first.text == "I" else text[:1].lower() + text[1:]


def _pointers(asked: Parse) -> list[int]:
    """The words of `asked` that point back: pronouns, "its …", "that <noun>", "there"."""
    tokens = asked.tokens
    start = main_clause(tokens)
    own = bool(_groups(asked, start, frame(tokens)))
    out = []
    for k in range(start, len(tokens)):
        t, low = tokens[k], tokens[k].text.lower()
        if low in _POINTERS and t.pos == "PRON":
            points = not (_relative(tokens, k) or (low == "it" and own and _expletive(tokens, k)))
        else:
            points = ((low in _POSSESSIVES and t.tag == "PRP$")
                      or (low in _DEMONSTRATIVES and t.pos == "DET")
                      or (low == "there" and t.dep != "expl" and t.pos == "ADV"))
        if points:
            out.append(k)
    return out


def _relative(tokens: tuple[Token, ...], k: int) -> bool:
    """"that" opening a relative clause ("the fee that applies")."""
    return tokens[tokens[k].head].dep == "relcl" or (k > 0 and tokens[k - 1].pos == "NOUN")


def _expletive(tokens: tuple[Token, ...], k: int) -> bool:
    """"it" in "Is it possible to …", "How long does it take to get a refund?"."""
    for j in range(k + 1, len(tokens) - 1):
        if tokens[j].text.lower() == "to" and tokens[j + 1].pos in ("VERB", "AUX"):
            return True
        if tokens[j].text.lower() in ("that", "if", "whether") and tokens[j].pos == "SCONJ":
            return True
    return False


def _action(previous: Parse) -> str | None:
    """What the person asked about does, when the previous question's subject is a person:
    "ship to Canada" in "Do you ship to Canada?"."""
    tokens = previous.tokens
    start = main_clause(tokens)
    aux = next((k for k in range(start, len(tokens)) if tokens[k].pos == "AUX"), None)
    if (aux is None or aux + 2 >= len(tokens) or tokens[aux + 1].text.lower() not in _PERSONAL
            or tokens[aux + 2].pos != "VERB"):
        return None
    verb = aux + 2
    # "have to return …", "need to return …": the action is the returning.
    if (tokens[verb].lemma in ("have", "need", "want") and verb + 2 < len(tokens)
            and tokens[verb + 1].text.lower() == "to" and tokens[verb + 2].pos == "VERB"):
        verb += 2
    return previous.text[tokens[verb].start:].rstrip().rstrip("?").rstrip() or None


def _resolve_pointers(asked: Parse, previous: Parse) -> str | None:
    focus = _focus(previous)
    if focus is None:
        return None
    tokens = asked.tokens
    groups = {g.first: g for g in _groups(asked, main_clause(tokens))}
    action = _action(previous)
    edits: list[tuple[int, int, str]] = []  # token range, replacement
    for k in _pointers(asked):
        low = tokens[k].text.lower()
        group = groups.get(k)  # a determiner opens the group it belongs to
        end = max(j for j in range(len(tokens)) if not _punct(tokens[j]))
        if (action and low in ("it", "that", "this") and tokens[k].dep == "nsubj"
                and tokens[end].lemma in _OF_DOING):
            # "How long does it take?" after "Do you ship to Canada?": what takes long is
            # shipping there, not Canada. ("How long does it keep?" after "Can I freeze the
            # loaf?" is about the loaf.)
            edits += [(k, k + 1, "it"), (end, end + 1, f"{tokens[end].text} to {action}")]
            continue
        if low in _POSSESSIVES and group is not None:
            edits.append((k, group.end, f"the {_text(asked, k + 1, group.end)} of {focus.text}"))
        elif low in _DEMONSTRATIVES and group is not None:
            same = [g for g in focus.groups
                    if stem(previous.tokens[g.head].lemma) == stem(tokens[group.head].lemma)]
            if same:
                edits.append((k, group.end, focus.text))
        elif low == "there":
            places = _entity_spans(previous, "place")
            if places:
                first, end = places[-1]
                place = _text(previous, first, end)
                edits.append((k, k + 1, f"in {_the(place)}"))
        elif low in _POINTERS and (low not in _PLURAL_POINTERS or focus.plural):
            edits.append((k, k + 1, focus.text))
    if not edits:
        return None
    text = asked.text
    for first, end, new in sorted(edits, reverse=True):
        text = text[:tokens[first].start] + new + text[tokens[end - 1].end:]
    text = text[tokens[_body(tokens)].start:]  # not "Thanks." or "And" before it
    return text[:1].upper() + text[1:]


# --- the conversation ---------------------------------------------------------------------


def _previous(earlier: Sequence[str], parse: Parser) -> Parse:
    """The last earlier question made to stand alone, each turn read against the one
    before."""
    current = parse(earlier[0])
    for question in earlier[1:]:
        asked = parse(question)
        text = rewrite(asked, current, parse)
        current = parse(text) if text is not None else asked
    return current


@functools.cache
def _prompt() -> Prompt:
    return load_prompt(PROMPT_VERSION)


def _by_model(question: str, earlier: Sequence[str], model: Model) -> str | None:
    """The model's rewrite, if it uses only the conversation's words (else None)."""
    prompt = _prompt()
    listed = "\n".join(f"{n}. {q}" for n, q in enumerate(earlier, start=1))
    try:
        reply = model(prompt.render(earlier=listed, question=question))
    except Exception:  # a model that fails leaves the rules to decide
        return None
    if not reply:
        return None
    text = reply.strip().splitlines()[0].strip().strip("\"'“”").strip()
    return text if from_conversation(text, [*earlier, question]) else None

