"""Streaming answers: typed stream events and the incremental citation-marker filter.

A streamed answer is a sequence of events: `meta` (who is answering from what), `citation`
(a gate-approved `Citation`), `delta` (answer text), `done` (the final `Answer`) or `error`.
The invariant of the gate holds in the stream too: a marker such as `[S1]` reaches the client
only after a `citation` event for `S1` was sent, and a marker the gate rejected never does.

`MarkerFilter` enforces that on any text stream, including a model's token stream where a
marker arrives split over several tokens (`[S`, `1]`). It holds back text that may still
become a marker, holds everything after a marker whose label is undecided (so text is never
reordered), releases a label marker once the caller accepted the label (after emitting its
citation event), and removes rejected markers and every other bracketed pseudo-citation
(`[Source: spec.pdf §4.2]`) with the whitespace before it, as `gate.strip_markers` does
for a whole text. A `[` that opens no bracket group is dropped too, so the released text never
contains a `[` that does not open an accepted marker (removal cannot splice a forged one).
The filter reads ASCII `[...]` only: text reaching it is gate-rendered or neutralised
(`text.neutralize`), so markers of other scripts and prose attributions are already gone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field

from citadel.records import Answer, Citation, Record, SourceRef, Standalone

# A bracket group without nested brackets or newlines, as `text.neutralize` reads one.
MAX_MARKER_CHARS = 300
_LABELS = re.compile(r"\s*S\d+(?:\s*[,;]\s*S\d+)*\s*")
_LABEL = re.compile(r"S\d+")


# --- events ------------------------------------------------------------------------------


class MetaEvent(Record):
    """Sent first: which request this is and what it was answered from."""

    type: Literal["meta"] = "meta"
    request_id: str
    snapshot_id: str
    backend: str
    strategy: str = ""
    generator: str = ""
    sources_consulted: tuple[SourceRef, ...] = ()
    standalone: Standalone | None = Field(
        default=None, description="In a conversation, the question being answered: the "
                                  "follow-up made to stand alone.")


class DeltaEvent(Record):
    """The next piece of answer text. Markers in it were announced by citation events."""

    type: Literal["delta"] = "delta"
    text: str


class CitationEvent(Record):
    """A citation the gate accepted, sent before any text whose marker refers to it."""

    type: Literal["citation"] = "citation"
    citation: Citation


class DoneEvent(Record):
    """The final answer; `answer.answer` equals the concatenated deltas."""

    type: Literal["done"] = "done"
    answer: Answer


class ErrorEvent(Record):
    """The stream failed after it started; no further events follow."""

    type: Literal["error"] = "error"
    code: str
    message: str
    request_id: str | None = None


StreamEvent = Annotated[
    MetaEvent | DeltaEvent | CitationEvent | DoneEvent | ErrorEvent, Field(discriminator="type")
]


# --- the marker filter --------------------------------------------------------------------


@dataclass(frozen=True)
class _Marker:
    """A complete bracket group: `keys` is None for a pseudo-citation (always removed)."""

    space: str
    keys: tuple[Hashable, ...] | None


def parse_marker(content: str) -> tuple[str, ...] | None:
    """The labels of a marker's inside (`S1`, `S1, S2`), or None if it is not a label marker."""
    if not _LABELS.fullmatch(content):
        return None
    return tuple(dict.fromkeys(_LABEL.findall(content)))


class MarkerFilter:
    """Incremental filter of citation markers in streamed text; one per stream.

    Usage: `feed(delta)` returns the text that is safe to release now. After each call,
    `pending` lists labels whose markers are waiting for a decision: emit the citation event
    and call `accept(label)`, or call `reject(label)`; both return text released by the
    decision. `close()` ends the input: undecided labels count as rejected and everything
    still held is released (a `[` that never closed is dropped).
    """

    def __init__(
        self,
        parse: Callable[[str], tuple[Hashable, ...] | None] = parse_marker,
        render: Callable[[Hashable], str] = "[{}]".format,
    ) -> None:
        # `parse` turns a bracket group's inside into the keys it cites (None: not a citation,
        # drop it); `render` turns an accepted key back into marker text. The defaults handle
        # `[S1]`/`[S1, S2]` with labels as keys; a generator whose markers carry quotes
        # (`[S1: "..."]`) can key decisions by (label, quote) and render `[S1]`.
        self._parse = parse
        self._render_key = render
        self._buf = ""  # input not yet classified: trailing whitespace or an open `[...`
        self._held: list[str | _Marker] = []  # everything from the first undecided marker on
        self._decided: dict[Hashable, bool] = {}
        self._out: list[str] = []

    @property
    def pending(self) -> tuple[Hashable, ...]:
        """Keys (labels) of held markers still waiting for a decision, first seen first."""
        keys = (
            key
            for item in self._held
            if isinstance(item, _Marker) and item.keys
            for key in item.keys
            if key not in self._decided
        )
        return tuple(dict.fromkeys(keys))

    @property
    def accepted(self) -> frozenset[Hashable]:
        return frozenset(key for key, ok in self._decided.items() if ok)

    def feed(self, text: str) -> str:
        self._buf += text
        self._scan(final=False)
        return self._take()

    def accept(self, key: Hashable) -> str:
        """Release markers citing `key`; call it only after the key's citation event."""
        return self._decide(key, True)

    def reject(self, key: Hashable) -> str:
        return self._decide(key, False)

    def close(self) -> str:
        self._scan(final=True)
        for key in self.pending:
            self._decided[key] = False
        self._drain()
        return self._take()

    # internals

    def _decide(self, key: Hashable, ok: bool) -> str:
        self._decided.setdefault(key, ok)  # a decision is final
        self._drain()
        return self._take()

    def _take(self) -> str:
        out, self._out = "".join(self._out), []
        return out

    def _scan(self, final: bool) -> None:
        buf = self._buf
        while buf:
            i = buf.find("[")
            if i < 0:
                # Trailing whitespace may still precede a marker: hold it unless input ended.
                keep = 0 if final else len(buf) - len(buf.rstrip())
                self._push(buf[: len(buf) - keep])
                buf = buf[len(buf) - keep:]
                break
            head = buf[:i]
            space = head[len(head.rstrip()):]
            self._push(head[: len(head) - len(space)])
            window = buf[i + 1 : i + 2 + MAX_MARKER_CHARS]
            stop = next((j for j, ch in enumerate(window) if ch in "[]\n"), None)
            if stop is not None and window[stop] == "]" and stop <= MAX_MARKER_CHARS:
                self._push(_Marker(space, self._parse(window[:stop])))
                buf = buf[i + 2 + stop:]
            elif stop is not None or len(window) > MAX_MARKER_CHARS or final:
                # Not a marker (`[` hit another bracket, a newline, the length limit or the end):
                # the `[` is dropped. Released as text it could pair with a `]` left behind
                # by a removed marker (`[S[x]1]` -> `[S1]`) and forge a marker; dropped, every
                # `[` a client receives opens a marker the caller accepted.
                self._push(space)
                buf = buf[i + 1:]
            else:
                buf = space + buf[i:]  # an open marker: wait for more input
                break
        self._buf = buf

    def _push(self, item: str | _Marker) -> None:
        if item == "":
            return
        self._held.append(item)
        self._drain()

    def _drain(self) -> None:
        while self._held:
            item = self._held[0]
            if isinstance(item, _Marker):
                if item.keys and any(key not in self._decided for key in item.keys):
                    return
                self._out.append(self._render(item))
            else:
                self._out.append(item)
            self._held.pop(0)

    def _render(self, marker: _Marker) -> str:
        kept = [key for key in marker.keys or () if self._decided.get(key)]
        if not kept:
            return ""
        return marker.space + " ".join(self._render_key(key) for key in kept)


def filter_markers(text: str, accepted: set[str] | frozenset[str]) -> str:
    """The whole-text result of the filter: keep markers of `accepted` labels only."""
    f = MarkerFilter()
    for label in accepted:
        f.accept(label)
    return f.feed(text) + f.close()


# --- a gated answer as a stream -----------------------------------------------------------

_PIECE = re.compile(r"\S+\s*|\s+")


def text_pieces(text: str) -> Iterator[str]:
    """Word-sized pieces (each with its trailing whitespace), the unit of a delta event."""
    for m in _PIECE.finditer(text):
        yield m.group()


def answer_events(answer: Answer) -> Iterator[StreamEvent]:
    """Stream an answer the gate already produced: meta, then citations and deltas, then done.

    For generators that draft the whole answer at once. Each label's citation events are sent
    when its first marker is reached, so they precede the text that refers to them. The final
    answer's text is the concatenated deltas: answer text is neutralised before it gets here
    (`text.neutralize`), so the filter normally changes nothing, and if it ever does, the
    client's text and `done.answer` still agree.
    """
    trace = answer.trace
    yield MetaEvent(request_id=trace.request_id, snapshot_id=trace.snapshot_id,
                    backend=trace.backend, strategy=trace.strategy, generator=trace.generator,
                    sources_consulted=answer.sources_consulted, standalone=trace.standalone)
    by_label: dict[str, list[int]] = {}
    for i, citation in enumerate(answer.citations):
        by_label.setdefault(citation.label, []).append(i)
    sent: set[int] = set()
    released: list[str] = []
    markers = MarkerFilter()

    def delta(text: str) -> Iterator[StreamEvent]:
        if text:
            released.append(text)
            yield DeltaEvent(text=text)

    for piece in text_pieces(answer.answer):
        text = markers.feed(piece)
        while markers.pending:
            label = markers.pending[0]
            yield from delta(text)
            if label in by_label:
                for i in by_label[label]:
                    sent.add(i)
                    yield CitationEvent(citation=answer.citations[i])
                text = markers.accept(label)
            else:
                text = markers.reject(label)
        yield from delta(text)
    yield from delta(markers.close())
    for i, citation in enumerate(answer.citations):  # accepted but unmarked: still evidence
        if i not in sent:
            yield CitationEvent(citation=citation)
    streamed = "".join(released)
    if streamed != answer.answer:
        answer = answer.model_copy(update={"answer": streamed})
    yield DoneEvent(answer=answer)
