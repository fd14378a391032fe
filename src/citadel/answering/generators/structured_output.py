"""Reading a model's structured answer `{answer, citations: [{id, quote}], confidence}` and
turning it into a `Draft` of sentences with (label, quote) pairs.

Parsing is defensive because many servers have no JSON mode: code fences, prose before or
after the object, single-quoted strings and trailing commas are tolerated; anything else is
an `OutputError` (the engine may retry). Nothing here is trusted: a marker in the answer text
and an entry in the citations list are both passed on to the gate, which decides.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from citadel.records import Draft, DraftCitation, DraftSentence
from citadel.text.sentences import sentence_spans
from citadel.text.terms import content_terms

# The JSON schema asked of servers that support structured output.
ANSWER_SCHEMA_NAME = "grounded_answer"

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)
_MARKER = re.compile(r"\[([^\[\]\n]{0,300})\]")
_LEADING_MARKERS = re.compile(r"^(?:\s*\[[^\[\]\n]{0,300}\])+[\s.;,]*")
_LABEL = re.compile(r"^\s*\[?\s*[Ss](\d{1,3})\s*\]?\s*$")
_LABEL_LIST = re.compile(r"^\s*[Ss]\d{1,3}(?:\s*(?:,|;|and|&)\s*[Ss]\d{1,3})*\s*$")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
NO_ANSWER = re.compile(
    r"\b(?:(?:do|does|did)\s*(?:not|n't)\s+(?:have|contain|include|say|mention|provide)\b"
    r"[^.]*\b(?:enough\s+)?information|not\s+enough\s+information|no\s+information|"
    r"cannot\s+answer|can't\s+answer|unable\s+to\s+answer)",
    re.I,
)


# Bounds of a structured reply (a grammar-constrained model cannot run past them): an empty
# quote verifies nothing; a longer one is not a quote but a copied block.
MIN_QUOTE_CHARS = 8
MAX_QUOTE_CHARS = 400
MAX_ANSWER_CHARS = 800
MAX_CITATIONS = 6


class OutputError(ValueError):
    """The reply is not a usable structured answer; the message says what is wrong."""


@dataclass(frozen=True)
class StructuredAnswer:
    answer: str
    citations: tuple[tuple[str, str], ...]  # (id as written, quote)
    confidence: float | None


def answer_schema(
    labels: list[str], fields: tuple[str, ...] = ("answer", "citations", "confidence")
) -> dict:
    """JSON schema of the reply; citation ids are restricted to this request's labels and
    quotes may not be empty. `fields` is the order a JSON-schema mode generates them in."""
    properties = {
        "answer": {"type": "string", "maxLength": MAX_ANSWER_CHARS},
        "citations": {
            "type": "array",
            "maxItems": MAX_CITATIONS,
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string", "enum": labels},
                    "quote": {"type": "string", "minLength": MIN_QUOTE_CHARS,
                              "maxLength": MAX_QUOTE_CHARS},
                },
                "required": ["id", "quote"],
                "additionalProperties": False,
            },
        },
        "confidence": {"type": "number"},
    }
    return {
        "type": "object",
        "properties": {f: properties[f] for f in fields},
        "required": list(fields),
        "additionalProperties": False,
    }


# -- parsing --------------------------------------------------------------------------------


def parse_structured(text: str) -> StructuredAnswer:
    """The structured answer inside a model's reply, or OutputError."""
    if not text or not text.strip():
        raise OutputError("the reply was empty")
    obj = _load_object(text)
    answer = obj.get("answer")
    if not isinstance(answer, str):
        raise OutputError('the JSON object has no string field "answer"')
    raw = obj.get("citations", [])
    if raw is None:
        raw = []
    if not isinstance(raw, list):
        raise OutputError('"citations" is not a list')
    citations: list[tuple[str, str]] = []
    for item in raw:
        if isinstance(item, dict):
            ident = item.get("id", item.get("label", ""))
            quote = item.get("quote", "")
            citations.append((str(ident) if ident is not None else "",
                              quote if isinstance(quote, str) else ""))
        elif isinstance(item, str):  # a bare label: a citation without a quote
            citations.append((item, ""))
        else:
            raise OutputError('an entry of "citations" is neither an object nor a label')
    return StructuredAnswer(answer=answer.strip(), citations=tuple(citations),
                            confidence=_confidence(obj.get("confidence")))


def _load_object(text: str) -> dict:
    candidates = [text.strip()]
    candidates += [m.group(1).strip() for m in _FENCE.finditer(text)]
    first_error = ""
    for candidate in candidates:
        for snippet in _objects_in(candidate):
            for variant in (snippet, _jsonish_to_json(snippet)):
                try:
                    value = json.loads(variant, strict=False)  # raw newlines in strings
                except ValueError as exc:
                    first_error = first_error or str(exc)
                    continue
                if isinstance(value, dict):
                    return value
    detail = f" ({first_error})" if first_error else ""
    raise OutputError(f"the reply is not a JSON object{detail}")


def _objects_in(text: str) -> list[str]:
    """Balanced `{...}` spans, outermost first, skipping braces inside strings."""
    spans: list[str] = []
    i = text.find("{")
    while i >= 0 and len(spans) < 5:
        end = _matching_brace(text, i)
        if end is None:
            spans.append(text[i:])  # truncated reply: let json report what is wrong
            break
        spans.append(text[i : end + 1])
        i = text.find("{", end + 1)
    return spans


def _matching_brace(text: str, start: int) -> int | None:
    depth, quote, escaped = 0, "", False
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i
    return None


def _jsonish_to_json(text: str) -> str:
    """Single-quoted strings to JSON strings, Python literals to JSON, no trailing commas
    (outside strings only)."""
    out: list[str] = []
    bare: list[str] = []  # text between strings, rewritten when a string starts

    def flush() -> None:
        chunk = "".join(bare)
        bare.clear()
        for python, json_word in (("True", "true"), ("False", "false"), ("None", "null")):
            chunk = re.sub(rf"\b{python}\b", json_word, chunk)
        out.append(re.sub(r",(\s*)(?=[}\]])", r"\1", chunk))

    i = 0
    while i < len(text):
        ch = text[i]
        if ch not in "\"'":
            bare.append(ch)
            i += 1
            continue
        flush()
        j, buf = i + 1, []
        while j < len(text) and text[j] != ch:
            if text[j] == "\\" and j + 1 < len(text):
                # \' is not a JSON escape; every other escape is kept as written
                buf.append("'" if text[j + 1] == "'" else text[j : j + 2])
                j += 2
                continue
            buf.append('\\"' if text[j] == '"' else text[j])
            j += 1
        out.append('"' + "".join(buf) + '"')
        i = j + 1
    flush()
    return "".join(out)


def _confidence(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip().rstrip("%")) / (100 if "%" in value else 1)
        except ValueError:
            return None
    if isinstance(value, int | float):
        return max(0.0, min(1.0, float(value)))
    return None


# -- markers and labels ---------------------------------------------------------------------


def normalize_label(ident: str) -> str:
    """`S1`, `s1`, `[S1]` -> `S1`; anything else unchanged (the gate will refuse it)."""
    m = _LABEL.match(ident)
    return f"S{int(m.group(1))}" if m else ident.strip()


def marker_labels(text: str) -> list[str]:
    """Labels named by the bracketed markers of a text, in order: `[S1, S2]` -> S1, S2;
    a marker that is not a label list (`[Source: spec.pdf §4.2]`) is kept whole."""
    labels: list[str] = []
    for m in _MARKER.finditer(text):
        inner = m.group(1).strip()
        if not inner:
            continue
        if _LABEL_LIST.match(inner):
            parts = re.split(r"\s*(?:,|;|and|&)\s*", inner)
            labels.extend(normalize_label(p) for p in parts if p.strip())
        else:
            labels.append(inner)
    return labels


def numbers_in(text: str) -> set[str]:
    """Numbers written in a text, normalised (1,000 -> 1000), markers excluded."""
    text = _MARKER.sub(" ", text)
    return {n.replace(",", "") for n in _NUMBER.findall(text)}


def is_no_answer(text: str) -> bool:
    return bool(NO_ANSWER.search(text))


def is_refusal(sentence: str) -> bool:
    """The sentence (markers aside) says the blocks do not answer."""
    return is_no_answer(_MARKER.sub(" ", sentence))


# -- mapping to a Draft ---------------------------------------------------------------------


def answer_sentences(answer: str) -> list[str]:
    """Sentences of the answer; a piece made only of markers joins the sentence before it."""
    sentences: list[str] = []
    for start, end in sentence_spans(answer):
        piece = answer[start:end]
        lead = _LEADING_MARKERS.match(piece)
        if sentences and lead:  # "30 days. [S1] Gift cards ..." split before the marker
            sentences[-1] = f"{sentences[-1]} {lead.group().strip()}"
            piece = piece[lead.end() :].strip()
        if not piece:
            continue
        if sentences and not _MARKER.sub("", piece).strip(" .;,"):
            sentences[-1] = f"{sentences[-1]} {piece}"
        else:
            sentences.append(piece)
    return sentences


def to_draft(parsed: StructuredAnswer, *, generator: str, prompt_version: str) -> Draft:
    """Sentences with the citations their markers name.

    A listed citation goes to the sentence carrying its marker that shares the most content
    words or numbers with its quote, else to any sentence that shares some (markers and list
    disagree: the gate, not this code, decides whether it stands), else it is unattached. A
    quote sharing nothing with a sentence does not support it. A marker with no listed
    citation becomes a citation without a quote, which the gate drops.
    """
    common = dict(generator=generator, prompt_version=prompt_version,
                  confidence=parsed.confidence)
    sentences = answer_sentences(parsed.answer)
    entries = [(normalize_label(i), q) for i, q in parsed.citations]
    if not sentences:
        return Draft(failure="the answer is empty", **common)
    # "I don't have enough information ..." is an abstention, with or without a citation:
    # such a sentence is never shown as grounded, and a reply made only of them abstains.
    sentences = [s for s in sentences if not is_refusal(s)]
    if not sentences:
        return Draft(abstain=True, **common)
    marks = [marker_labels(s) for s in sentences]
    if not entries and not any(marks) and not any(is_factual(s) for s in sentences):
        return Draft(abstain=True, **common)

    attached: list[list[DraftCitation]] = [[] for _ in sentences]
    unattached: list[DraftCitation] = []
    for label, quote in entries:
        citation = DraftCitation(label=label, quote=quote)
        carriers = [i for i, m in enumerate(marks) if label in m]
        target = _best_sentence(quote, sentences, carriers)
        if target is None:
            target = _best_sentence(quote, sentences, range(len(sentences)))
        if target is None:
            unattached.append(citation)
        else:
            attached[target].append(citation)
    for i, labels in enumerate(marks):
        given = {c.label for c in attached[i]}
        for label in dict.fromkeys(labels):
            if label not in given:
                attached[i].append(DraftCitation(label=label, quote=""))
    return Draft(
        sentences=tuple(DraftSentence(text=s, citations=tuple(c))
                        for s, c in zip(sentences, attached, strict=True)),
        unattached=tuple(unattached),
        **common,
    )


def _best_sentence(quote: str, sentences: list[str], candidates) -> int | None:
    """The candidate sharing the most content terms or numbers with the quote (first on a
    tie), or None when none shares any."""
    best, best_overlap = None, 0
    for i in candidates:
        overlap = _overlap(quote, sentences[i])
        if overlap > best_overlap:
            best, best_overlap = i, overlap
    return best


def _overlap(quote: str, sentence: str) -> int:
    terms = set(content_terms(_MARKER.sub(" ", sentence)))
    return len(terms & set(content_terms(quote)))


def is_factual(sentence: str) -> bool:
    """A sentence that states something checkable: a number, or three content words, and
    not a statement that the blocks do not answer."""
    text = _MARKER.sub(" ", sentence)
    if is_no_answer(text):
        return False
    return bool(numbers_in(text)) or len(set(content_terms(text))) >= 3
