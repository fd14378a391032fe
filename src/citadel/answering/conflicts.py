"""The conflict check: do the context's documents disagree on what the question asks?

Run by the engine after `build_context` and before generation. Pure: question + context in,
`Conflict | None` out.

1. **What is asked.** The question's content terms, the kinds of value that answer it
   ("how long" → a duration or a date, "how much" → an amount, "where" → a place, "how
   many" → a count; no cue → any kind but counts) and its scope words ("EU", "Norway").
2. **Candidate facts.** Every value (`citadel.answering.facts`) in every context sentence that is
   *relevant* (the sentence, with half credit for its chunk's title and section, covers at
   least half of the question's terms), *tied* to the question (a question term is among
   the words the value quantifies), *in scope* (every question scope word appears in the
   sentence or its headings) and not under an unrelated condition ("If your tracking has not
   updated for 5 business days, ..." is another case).
3. **Disagreement.** Candidates are taken strongest first. For each, every other document
   contributes its one closest fact of the same kind and unit (same word before the value,
   then most similar subject): one side per document, never a merge of two. A side counts
   when the question terms tied to both values overlap by at least half and their scope
   words do not exclude each other ("EU delivery" vs "delivery to Norway"). Two sides
   disagree when their values differ (`facts.agree`) and neither document also states the
   other's value anywhere in the context (a page that gives both "5–8 days" and "5–10 days"
   is describing two cases, not contradicting anyone).
4. **Resolution** (the rule; docs/poison.md): sides are grouped by value, and the group with
   the most authoritative side (ties: newest `effective_date`) leads.
   * lead authority − every other group's authority ≥ `authority_gap` (default 0.5: a 1.0
     policy against a 0.2 forum post) → `resolution="authoritative"`: answer from the lead
     side, and say that a lower-authority source disagrees;
   * otherwise → `resolution="flagged"`: present every side with its own citation, say which
     has the higher authority and which is newer, and let the user decide. A newer date alone
     never settles a conflict: a document replaces another only by declaring `supersedes`
     (handled earlier, in `build_context`).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from citadel.answering.answer_norm import states
from citadel.answering.facts import (
    UNIT_WORDS,
    Fact,
    agree,
    comparable,
    extract_facts,
    subject_terms,
)
from citadel.records import Conflict, ConflictSide, Context, ContextBlock
from citadel.text.neutralize import neutralize
from citadel.text.sentences import display_text, sentence_spans
from citadel.text.terms import content_terms, tokens
from citadel.text.values import MONTHS, WEEKDAYS

MIN_RELEVANCE = 0.5
MIN_RELEVANCE_NO_CUE = 0.75
MIN_TIE_OVERLAP = 0.5
DEFAULT_AUTHORITY_GAP = 0.5

_CUES: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = (
    (re.compile(r"\bhow (?:long|soon|quickly|often)\b|\bfrequen|"
                r"\bhow many (?:minutes|hours|days|weeks|months|years)\b|\bexpir|\bvalid\b|"
                r"\bhow much (?:notice|time|longer|later|earlier|sooner|warning)\b|"
                r"\bdeadline\b|\btime limit\b", re.I),
     frozenset({"duration", "date"})),
    (re.compile(r"\bhow much\b(?!\s+(?:notice|time|longer|later|earlier|sooner|warning))"
                r"|\bcosts?\b|\bprices?\b|\bfees?\b|\bcharges?\b", re.I),
     frozenset({"money", "percent"})),
    (re.compile(r"\bdiscount|\bpercent|%", re.I), frozenset({"percent", "money"})),
    (re.compile(r"\bwhen\b|\bwhat date\b|\buntil\b|\bwhich day\b", re.I),
     frozenset({"date", "duration"})),
    (re.compile(r"\bwhere\b|\bwhich (?:warehouse|address|city|country|office|store|depot)\b|"
                r"\baddress\b", re.I), frozenset({"place"})),
    (re.compile(r"\bhow many\b", re.I), frozenset({"count"})),
    (re.compile(r"\bwhat time\b|\bhours\b|\bopen\b|\bclos(?:e|es|ed|ing)\b|\bwhich days\b",
                re.I), frozenset({"time", "hours", "weekdays"})),
    (re.compile(r"\bhow (?:far|heavy|tall|wide|big|large)\b|\bweigh|\bdistance\b|"
                r"\bdimensions?\b", re.I), frozenset({"quantity"})),
)
_CALENDAR_WORDS = frozenset({*MONTHS, *WEEKDAYS})
ALL_KINDS = frozenset({"duration", "money", "percent", "date", "place"})
_CUE_WORDS = frozenset({"long", "much", "many", "soon", "quickly", "time", "until"})
# "If an item arrives faulty, ..." states a value for a narrower case than the one asked.
_CONDITIONAL = re.compile(r"(?:if|unless|when|where|in case)\b", re.I)
# A leading condition or purpose clause, up to its comma.
_CONDITION = re.compile(r"(?:if|unless|when|whenever|where|in case|once|to)\b([^,]{0,200}),",
                        re.I)
_KIND_NOUN = {"duration": "duration", "money": "amount", "percent": "percentage",
              "date": "date", "place": "location", "count": "number", "quantity": "quantity",
              "time": "time", "hours": "hours", "weekdays": "days"}


@dataclass(frozen=True)
class Candidate:
    fact: Fact
    block: ContextBlock
    score: float


def _asks_for_value(question: str) -> bool:
    return any(cue.search(question) for cue, _ in _CUES) or bool(extract_facts(question))


def asked_kinds(question: str) -> frozenset[str]:
    """Kinds of value that answer the question: from its cue words, and from any value it
    states itself ("Can I return anything within 90 days?" asks about a duration)."""
    kinds = frozenset().union(*(k for cue, k in _CUES if cue.search(question)))
    kinds |= {f.kind for f in extract_facts(question)}
    return kinds or ALL_KINDS


# The kinds of value `text.values` reads that answer each kind a question asks for:
# "how many" asks a count (of users, or of days), not an amount of money.
_ANSWERED_BY = {"count": {"number", "duration", "quantity"},  # "how many (business) days"
                "quantity": {"quantity", "number"},
                "time": {"time", "hours"}, "hours": {"hours", "time", "weekdays"},
                "weekdays": {"weekdays", "hours"}, "duration": {"duration"},
                # A bare number may be a year ("in 1066"): `text.values` reads it as a number.
                "date": {"date", "duration", "weekdays", "time", "hours", "number"},
                "money": {"money"}, "percent": {"percent"},
                "place": set()}


def wanted_values(question: str) -> frozenset[str] | None:
    """The kinds of value (`text.values`) that can answer the question, when its cue words
    ask for some ("how much" → money); None when they ask for none in particular."""
    kinds = asked_kinds(question)
    if kinds == ALL_KINDS:
        return None
    return frozenset().union(*(_ANSWERED_BY.get(k, set()) for k in kinds))


def question_terms(question: str) -> set[str]:
    """What the question is about: its content terms without cue words, unit words or the
    values it states (those say what kind of answer is wanted, not about what)."""
    text = question
    for f in reversed(extract_facts(question)):
        text = text[: f.start] + " " + text[f.end:]
    return set(content_terms(text)) - _CUE_WORDS - UNIT_WORDS


def question_scope(question: str) -> frozenset[str]:
    """Capitalised words past the first, and acronyms anywhere: "EU", "Norway". Month and
    day names are values, not scope."""
    words = re.findall(r"[^\W\d_]+", question)
    return frozenset(
        w.lower() for i, w in enumerate(words)
        if ((w.isupper() and len(w) > 1) or (i > 0 and w[0].isupper() and w.lower() != "i"))
        and w.lower() not in _CALENDAR_WORDS
    )


def tie_terms(question: str) -> set[str]:
    """Question terms that name what is asked about: scope words ("EU") narrow it, they do
    not say what a value quantifies."""
    return question_terms(question) - question_scope(question)


def candidates(question: str, context: Context) -> list[Candidate]:
    """Relevant, tied, in-scope facts of the context."""
    q_terms = question_terms(question)
    ties = tie_terms(question)
    if not q_terms or not ties:
        return []
    kinds = asked_kinds(question)
    # A question that asks for no kind of value needs a closer match before a value in a
    # sentence can be said to answer it.
    min_relevance = MIN_RELEVANCE if _asks_for_value(question) else MIN_RELEVANCE_NO_CUE
    scope = question_scope(question)
    out: list[Candidate] = []
    for block in context.blocks:
        chunk = block.chunk
        if chunk.suspicious:
            continue
        heading = set(content_terms(f"{chunk.title} {chunk.section}"))
        heading_words = set(tokens(f"{chunk.title} {chunk.section}"))
        for start, end in sentence_spans(chunk.content):
            raw = chunk.content[start:end]
            if raw.lstrip().startswith("#"):
                continue
            sentence = display_text(raw)
            condition = _CONDITION.match(sentence)
            if condition and not ties & set(content_terms(condition.group(1))):
                continue  # "If your tracking has not updated for 5 days, ...": another case
            s_terms = set(content_terms(sentence))
            cover = (len(q_terms & s_terms) + 0.5 * len(q_terms & (heading - s_terms)))
            cover /= len(q_terms)
            if cover < min_relevance or not scope <= set(tokens(sentence)) | heading_words:
                continue
            head = subject_terms(sentence, 0, 0, head=2, before=0, after=0)
            bonus = (0.25 if q_terms & head else 0.0) - (0.25 if _CONDITIONAL.match(sentence)
                                                          else 0.0)
            for fact in extract_facts(sentence):
                if fact.kind not in kinds or not ties & fact.subject:
                    continue
                score = cover + bonus
                out.append(Candidate(fact, block, round(score, 6)))
    return out


def check_conflicts(
    question: str, context: Context, *, authority_gap: float = DEFAULT_AUTHORITY_GAP
) -> Conflict | None:
    """The strongest disagreement between context documents on what the question asks."""
    found = sorted(candidates(question, context), key=lambda c: -c.score)
    ties = tie_terms(question)
    for anchor in found:
        # Per other document, its fact closest to the anchor's attribute: same word before
        # the value ("until" 31 January vs "until" 15 January, not "from" 1 November), then
        # most similar subject, then most relevant.
        others: dict[str, Candidate] = {}
        for c in sorted(found, key=lambda c: _closeness(anchor, c), reverse=True):
            doc = c.block.chunk.document_id
            if (doc != anchor.block.chunk.document_id and doc not in others
                    and comparable(anchor.fact, c.fact)
                    and _same_question_part(ties, anchor.fact, c.fact)
                    and not _scopes_exclude(anchor.fact, c.fact)):
                others[doc] = c
        disagreeing = [c for c in others.values() if not agree(anchor.fact, c.fact)
                       and not _states(found, c, anchor) and not _states(found, anchor, c)]
        if disagreeing:
            agreeing = [c for c in others.values() if agree(anchor.fact, c.fact)]
            return _conflict([anchor, *agreeing, *disagreeing], ties, authority_gap)
    return None


def _same_question_part(ties: set[str], a: Fact, b: Fact) -> bool:
    """Both values quantify the same part of the question: the question terms tied to each
    overlap by at least half (Jaccard). "Refunds take about a day" and "the membership fee
    is refunded if you cancel within 14 days" share "refund" but not "membership fee"."""
    ta, tb = ties & a.subject, ties & b.subject
    return bool(ta & tb) and len(ta & tb) >= MIN_TIE_OVERLAP * len(ta | tb)


def _closeness(anchor: Candidate, c: Candidate) -> tuple[bool, float, float]:
    a, b = anchor.fact.subject, c.fact.subject
    jaccard = len(a & b) / len(a | b) if a | b else 0.0
    return anchor.fact.lead == c.fact.lead, round(jaccard, 6), c.score


def _scopes_exclude(a: Fact, b: Fact) -> bool:
    """Both sentences narrow the topic, to different things: "EU" vs "Norway"."""
    only_a, only_b = a.scope - b.scope, b.scope - a.scope
    return bool(only_a) and bool(only_b) and not (a.scope & b.scope)


def _states(found: list[Candidate], holder: Candidate, other: Candidate) -> bool:
    """Whether `holder`'s document also states `other`'s value in a sentence of this
    context that answers the question (`answer_norm.states`)."""
    doc = holder.block.chunk.document_id
    sentences = {c.fact.sentence for c in found if c.block.chunk.document_id == doc}
    return any(states(sentence, other.fact.text) for sentence in sentences)


def _side(c: Candidate) -> ConflictSide:
    return ConflictSide(label=c.block.label, chunk_id=c.block.chunk.chunk_id,
                        document_id=c.block.chunk.document_id, title=c.block.chunk.title,
                        value=c.fact.text, quote=c.fact.sentence,
                        authority=c.block.chunk.authority,
                        effective_date=c.block.chunk.effective_date)


def _conflict(group: list[Candidate], ties: set[str], authority_gap: float) -> Conflict:
    sides = [_side(c) for c in group]
    fact_of = {(s.chunk_id, s.value, s.quote): c.fact for s, c in zip(sides, group, strict=True)}

    def same(a: ConflictSide, b: ConflictSide) -> bool:
        return agree(fact_of[(a.chunk_id, a.value, a.quote)],
                     fact_of[(b.chunk_id, b.value, b.quote)])

    def attribute(lead: ConflictSide, rivals: list[ConflictSide]) -> str:
        lead_fact = fact_of[(lead.chunk_id, lead.value, lead.quote)]
        shared = ties & lead_fact.subject
        for r in rivals:
            shared &= fact_of[(r.chunk_id, r.value, r.quote)].subject
        return f"{surface(lead_fact.sentence, shared)} ({_KIND_NOUN[lead_fact.kind]})"

    return resolve(sides, same, attribute, authority_gap)


def _rank(side: ConflictSide) -> tuple[float, dt.date]:
    return side.authority, side.effective_date or dt.date.min


def resolve(
    sides: Sequence[ConflictSide],
    same: Callable[[ConflictSide, ConflictSide], bool],
    attribute: Callable[[ConflictSide, list[ConflictSide]], str],
    authority_gap: float,
) -> Conflict:
    """The conflict rule, for any kind of disputed value (numbers and dates here, answer
    spans in `span_conflicts`): sides ordered by authority, then recency; the lead is
    followed when it outranks every side that disagrees with it (`same` is false) by the
    authority gap, otherwise the conflict is flagged."""
    ordered = sorted(sides, key=_rank, reverse=True)
    lead = ordered[0]
    rivals = [c for c in ordered if not same(lead, c)]
    gap = lead.authority - max(c.authority for c in rivals)
    resolution = "authoritative" if gap >= authority_gap - 1e-9 else "flagged"
    strictly_first = _rank(lead) > max(_rank(c) for c in rivals)
    preferred = lead if resolution == "authoritative" or strictly_first else None
    return Conflict(
        # Written into answer text around the gate: no pseudo-citation may ride along.
        attribute=neutralize(attribute(lead, rivals)),
        values=tuple(s.value for s in ordered),
        chunk_ids=tuple(s.chunk_id for s in ordered),
        preferred_chunk_id=preferred.chunk_id if preferred else None,
        explanation=explain(tuple(ordered), resolution, preferred is not None),
        resolution=resolution,
        sides=tuple(ordered),
    )


def surface(sentence: str, stems: set[str]) -> str:
    """The words of `sentence` whose stems are in `stems`, as written, in order."""
    words: list[str] = []
    for w in tokens(sentence):
        for s in content_terms(w):
            if s in stems and w not in words:
                words.append(w)
    return " ".join(words) or "value"


def authority_text(authority: float) -> str:
    """1.0, 0.2, 0.75: at least one decimal, no float noise."""
    text = f"{authority:.2f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


def named(title: str) -> str:
    """A document as answer text names it, `“Title”`. The title is its author's text written
    around the gate, so it is neutralised first (`[S1] Forum` -> `“Forum”`)."""
    title = neutralize(title)
    return f"“{title}”" if title else "an untitled source"


def explain(sides: tuple[ConflictSide, ...], resolution: str, has_preferred: bool) -> str:
    """Which source has the higher authority, which is newer, and what the answer does."""
    lead = sides[0]
    lead_name = named(lead.title)
    rivals = [s for s in sides[1:] if s.value != lead.value] or list(sides[1:])
    newest = max(sides, key=lambda s: s.effective_date or dt.date.min)
    parts: list[str] = []
    if all(lead.authority > s.authority for s in rivals):
        others = ", ".join(authority_text(s.authority) for s in rivals)
        parts.append(f"{lead_name} has the higher authority "
                     f"({authority_text(lead.authority)} vs {others})")
    else:
        parts.append("the sources have the same authority")
    dated = [s for s in sides if s.effective_date]
    if len(dated) == len(sides) and len({s.effective_date for s in sides}) > 1:
        who = "it" if newest is lead else named(newest.title)
        parts.append(f"{who} is newer (effective {newest.effective_date.isoformat()})")
    text = "; ".join(parts)
    text = text[0].upper() + text[1:] + "."
    if resolution == "authoritative":
        return text + f" The answer follows {lead_name}."
    if has_preferred:
        return text + " Confirm before relying on either."
    return text + " Neither can be preferred from the documents alone."
