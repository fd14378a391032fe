"""Releasing a token-streamed answer sentence by sentence, after the gate.

A generator that streams (`Generator.streams_sentences`) yields each sentence the moment the
model completes it. The engine gates it; what the gate kept goes out here: first a citation
event for every citation not sent before, then the sentence's text with its gate-rendered
markers through `streaming.MarkerFilter`, which releases a marker only for a label whose
citation was announced. One `SentenceRelease` per stream; text already released is never
taken back, so a sentence is released only once it passed the gate and the review.
"""

from __future__ import annotations

from collections.abc import Iterator

from citadel.answering.streaming import CitationEvent, DeltaEvent, MarkerFilter, StreamEvent
from citadel.gate import GatedSentence, GateResult
from citadel.records import Citation, DroppedCitation


class SentenceRelease:
    def __init__(self) -> None:
        self._markers = MarkerFilter()
        self._announced: set[str] = set()
        self._keys: set[tuple[str, int, int]] = set()
        self.sentences: list[GatedSentence] = []
        self.citations: list[Citation] = []
        self._deltas: list[str] = []

    @property
    def released(self) -> bool:
        return bool(self.sentences)

    @property
    def text(self) -> str:
        """Everything sent as deltas so far: the answer text the client has."""
        return "".join(self._deltas)

    def release(self, result: GateResult) -> Iterator[StreamEvent]:
        """Events for the sentences and citations of one gate result."""
        yield from self._announce(result.citations)
        for sentence in result.sentences:
            text = (" " if self.sentences else "") + sentence.text
            text += "".join(f" [{label}]" for label in sentence.labels)
            self.sentences.append(sentence)
            yield from self._feed(text)

    def release_text(self, text: str, result: GateResult) -> Iterator[StreamEvent]:
        """Events for a text written around a gate result (a conflict answer: its sentences
        with the words that introduce them), continuing what was released."""
        yield from self._announce(result.citations)
        self.sentences.extend(result.sentences)
        yield from self._feed((" " if self._deltas else "") + text)

    def _announce(self, citations: tuple[Citation, ...]) -> Iterator[StreamEvent]:
        for citation in citations:
            key = (citation.chunk_id, citation.start, citation.end)
            if key not in self._keys:
                self._keys.add(key)
                self.citations.append(citation)
                self._announced.add(citation.label)
                yield CitationEvent(citation=citation)

    def _feed(self, text: str) -> Iterator[StreamEvent]:
        out = self._markers.feed(text)
        while self._markers.pending:
            label = self._markers.pending[0]
            out += (self._markers.accept(label) if label in self._announced
                    else self._markers.reject(label))
        yield from self._delta(out)

    def close(self) -> Iterator[StreamEvent]:
        yield from self._delta(self._markers.close())

    def result(self, dropped: tuple[DroppedCitation, ...]) -> GateResult:
        return GateResult(sentences=tuple(self.sentences), citations=tuple(self.citations),
                          dropped=dropped)

    def _delta(self, text: str) -> Iterator[StreamEvent]:
        if text:
            self._deltas.append(text)
            yield DeltaEvent(text=text)
