"""Sentence spans with offsets: the unit of chunk packing and of extractive answers."""

from __future__ import annotations

import re

# A sentence ends at . ! or ? followed by whitespace and something that starts a sentence,
# or at a line break (Markdown lists and paragraphs put one idea per line).
_BOUNDARY = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]*[A-Z0-9£€$*_-])|\n+")
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "mr.", "mrs.", "ms.", "dr.", "no.", "approx.")
_MARKUP = re.compile(r"^\s*(?:[-*+>]|\d+[.)])\s+|\*\*|__|`")


def display_text(sentence: str) -> str:
    """A sentence without Markdown list/emphasis markup (the gate ignores punctuation)."""
    return re.sub(r"\s+", " ", _MARKUP.sub("", sentence)).strip()


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Spans (absolute offsets) of the non-blank sentences of text[start:end], stripped."""
    end = len(text) if end is None else end
    spans: list[tuple[int, int]] = []
    cursor = start
    for m in _BOUNDARY.finditer(text, start, end):
        piece = text[cursor : m.start()]
        if m.group().strip() and piece.lower().endswith(_ABBREVIATIONS):
            continue
        _append_stripped(text, cursor, m.start(), spans)
        cursor = m.end()
    _append_stripped(text, cursor, end, spans)
    return spans


def _append_stripped(text: str, start: int, end: int, spans: list[tuple[int, int]]) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start < end:
        spans.append((start, end))
