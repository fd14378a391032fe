"""The answer format used when a model's tokens are streamed: plain sentences, each ending
in inline citation markers that carry their quote, `... 30 days [S1: "within 30 days"].`

Why not the JSON format of non-streamed answers: there the quotes arrive in a list after the
whole answer text, so no sentence could be verified (and released) before the model had
finished. With the quote inside the marker, each sentence can go through the gate the moment
it is complete. `SentenceStream` finds complete sentences in a growing text without ever
splitting inside a marker (a quote may contain full stops); `draft_sentence` reads a sentence's
markers as (label, quote) pairs — anything bracketed that is not a label becomes a citation
with that text as its label, which the gate refuses.
"""

from __future__ import annotations

import re

from citadel.answering.generators.structured_output import marker_labels, normalize_label
from citadel.records import DraftCitation, DraftSentence

MAX_MARKER_CHARS = 300
_MARKER = re.compile(r"\[([^\[\]\n]{0,300})\]")  # ASCII only: the gate strips other scripts
_MASK = "\x00"  # stands for marker characters while looking for sentence ends
# A sentence ends at . ! or ? (markers may sit before or after it), once the next
# non-space character is known not to be a marker that still belongs to this sentence.
_END = re.compile(
    r"[.!?][\"')]*(?:[ \t]*\x00+(?!\x00)[.!?]?)*(?=\s+[^\s\x00])|\n\s*(?=[^\s\x00])"
)
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "mr.", "mrs.", "ms.", "dr.", "no.", "approx.")
_LABEL_QUOTE = re.compile(r"^\s*(S\d{1,3})\s*(?::|,|-|–)?\s*(.+?)\s*$", re.I | re.S)
_QUOTE_CHARS = "\"'“”‘’«»"


class SentenceStream:
    """Complete sentences of an incrementally fed text; `close()` returns the rest."""

    def __init__(self) -> None:
        self._buf = ""

    def feed(self, text: str) -> list[str]:
        self._buf += text
        return self._take(final=False)

    def close(self) -> list[str]:
        return self._take(final=True)

    def _take(self, final: bool) -> list[str]:
        buf = self._buf
        safe = len(buf) if final else _open_marker_start(buf)
        masked = _MARKER.sub(lambda m: _MASK * len(m.group()), buf[:safe])
        sentences: list[str] = []
        start = 0
        for m in _END.finditer(masked):
            piece = buf[start : m.end()].strip()
            if piece.lower().endswith(_ABBREVIATIONS):
                continue
            if piece:
                sentences.append(piece)
            start = m.end()
        if final:
            rest = buf[start:].strip()
            if rest:
                sentences.append(rest)
            start = len(buf)
        self._buf = buf[start:]
        return sentences


def _open_marker_start(buf: str) -> int:
    """Where an unfinished marker starts (nothing after it can be split yet), else the end."""
    i = buf.rfind("[")
    if i < 0 or "]" in buf[i:] or "\n" in buf[i:] or len(buf) - i > MAX_MARKER_CHARS + 2:
        return len(buf)
    return i


def marker_citations(inner: str) -> list[DraftCitation]:
    """The (label, quote) pairs of one marker's inside: `S1: "words"` -> (S1, words);
    `S1, S2` -> quoteless citations; anything else -> one citation labelled with it."""
    m = _LABEL_QUOTE.match(inner)
    if m and not re.fullmatch(r"\s*(?:,|;|and|&)?\s*S\d{1,3}.*", m.group(2), re.I | re.S):
        quote = m.group(2).strip().strip(_QUOTE_CHARS).strip()
        return [DraftCitation(label=normalize_label(m.group(1)), quote=quote)]
    return [DraftCitation(label=label, quote="") for label in marker_labels(f"[{inner}]")]


def draft_sentence(sentence: str) -> DraftSentence:
    """A streamed sentence with its inline markers as citations (text keeps the markers;
    the gate strips them)."""
    citations: list[DraftCitation] = []
    for m in _MARKER.finditer(sentence):
        if m.group(1).strip():
            citations.extend(marker_citations(m.group(1)))
    return DraftSentence(text=sentence, citations=tuple(citations))
