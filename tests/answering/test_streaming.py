import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citadel.answering.streaming import (
    CitationEvent,
    DeltaEvent,
    DoneEvent,
    MarkerFilter,
    MetaEvent,
    filter_markers,
    parse_marker,
)
from citadel.gate import strip_markers

# The reference: the same rule applied to the whole text at once with a regular expression.
_GROUP = re.compile(r"(\s*)\[([^\[\]\n]{0,300})\]")


def reference(text: str, accepted: set[str]) -> str:
    """Bracket groups replaced (accepted labels) or removed; a `[` opening none is dropped."""
    out, last = [], 0
    for m in _GROUP.finditer(text):
        out.append(text[last:m.start()].replace("[", ""))
        labels = parse_marker(m.group(2))
        kept = [label for label in labels or () if label in accepted]
        out.append(m.group(1) + " ".join(f"[{label}]" for label in kept) if kept else "")
        last = m.end()
    out.append(text[last:].replace("[", ""))
    return "".join(out)


def run_stream(pieces: list[str], accepted: set[str]) -> tuple[str, list[tuple[str, str]]]:
    """Drive a filter like a streaming caller: decide each label when it becomes pending."""
    f = MarkerFilter()
    log: list[tuple[str, str]] = []

    def release(text: str) -> None:
        if text:
            log.append(("text", text))

    def settle() -> None:
        while f.pending:
            label = f.pending[0]
            if label in accepted:
                log.append(("citation", label))
                release(f.accept(label))
            else:
                release(f.reject(label))

    for piece in pieces:
        release(f.feed(piece))
        settle()
    release(f.close())
    return "".join(t for kind, t in log if kind == "text"), log


def assert_markers_follow_citations(log: list[tuple[str, str]]) -> None:
    announced: set[str] = set()
    for kind, value in log:
        if kind == "citation":
            announced.add(value)
        else:
            assert set(re.findall(r"\[(S\d+)\]", value)) <= announced, (value, announced)


TEXT = (
    "Returns are accepted within 30 days [S1]. Refunds take 5 days [S2, S3] and "
    "store credit never expires [S4][Source: refunds_v3.pdf §4.2] but [S9] was invented."
)
ACCEPTED = {"S1", "S3"}


def test_every_two_way_split_gives_the_whole_text_result():
    want = reference(TEXT, ACCEPTED)
    assert want == ("Returns are accepted within 30 days [S1]. Refunds take 5 days [S3] and "
                    "store credit never expires but was invented.")
    for i in range(len(TEXT) + 1):
        got, log = run_stream([TEXT[:i], TEXT[i:]], ACCEPTED)
        assert got == want, i
        assert_markers_follow_citations(log)


def test_every_three_way_split_around_markers():
    want = reference(TEXT, ACCEPTED)
    for i in range(len(TEXT) + 1):
        for j in range(i, min(len(TEXT), i + 12) + 1):
            got, _ = run_stream([TEXT[:i], TEXT[i:j], TEXT[j:]], ACCEPTED)
            assert got == want, (i, j)


def test_character_by_character_stream():
    got, log = run_stream(list(TEXT), ACCEPTED)
    assert got == reference(TEXT, ACCEPTED)
    assert_markers_follow_citations(log)


def test_marker_split_across_tokens_is_held_until_complete():
    f = MarkerFilter()
    assert f.feed("Thirty days [S") == "Thirty days"
    assert f.pending == ()
    assert f.feed("1") == ""
    assert f.feed("] left.") == ""
    assert f.pending == ("S1",)
    assert f.accept("S1") == " [S1] left."
    assert f.close() == ""


def test_text_after_an_undecided_marker_waits_and_keeps_its_order():
    f = MarkerFilter()
    assert f.feed("A [S1] b [S2] c") == "A"
    assert f.pending == ("S1", "S2")
    assert f.accept("S2") == ""  # S1 still blocks everything after it
    assert f.reject("S1") == " b [S2] c"


def test_rejected_and_pseudo_citations_are_removed_with_their_space():
    assert filter_markers("Cost is $5 [S7] [Source: x.pdf] today [ref 3].", {"S1"}) == (
        "Cost is $5 today."
    )


def test_undecided_labels_are_dropped_at_close():
    f = MarkerFilter()
    assert f.feed("Fact [S2].") == "Fact"
    assert f.close() == "."


def test_a_bracket_that_opens_no_marker_is_dropped():
    assert filter_markers("a [b c", set()) == "a b c"
    assert filter_markers("x [" + "y" * 301 + "] z", set()) == "x " + "y" * 301 + "] z"
    assert filter_markers("x [line\nbreak] z", set()) == "x line\nbreak] z"
    assert filter_markers("x [a [S1] z", {"S1"}) == "x a [S1] z"


@pytest.mark.parametrize("text", ["[S[x]1]", "[S[Source: a.pdf]1]", "[S[S2]1]",
                                  "[S" + "[" + "x" * 299 + "]" + "1]", "[[S1]]", "[S[\n]1]"])
def test_removing_a_marker_cannot_splice_a_forged_one(text):
    for split in range(len(text) + 1):
        got, log = run_stream([text[:split], text[split:]], accepted=set())
        assert "[S1]" not in got and "[S2]" not in got
        assert_markers_follow_citations(log)


def test_multi_label_marker_keeps_only_accepted_labels():
    assert filter_markers("x [S1; S2, S3].", {"S1", "S3"}) == "x [S1] [S3]."


def test_with_only_rejections_the_filter_agrees_with_the_gate_stripper():
    text = "The  fee is 5 EUR [S1] [Source: fees.pdf]  per item [S2]."
    assert strip_markers(filter_markers(text, set())) == strip_markers(text)


_ATOMS = st.sampled_from([
    "[S1]", "[S2]", "[S3]", "[S1, S2]", "[S2;S3]", "[Source: a.pdf]", "[]", "[", "]", "S1",
    " ", "  ", "\n", "\t", "word", "30 days", ".", ",", "[S", "1]", "[x",
])


@st.composite
def split_text(draw) -> tuple[str, list[str]]:
    text = "".join(draw(st.lists(_ATOMS, max_size=30)))
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=8)))
    bounds = [0, *cuts, len(text)]
    return text, [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


@settings(max_examples=400, deadline=None)
@given(split_text(), st.sets(st.sampled_from(["S1", "S2", "S3"])))
def test_any_split_of_any_text_equals_the_whole_text_result(case, accepted):
    text, pieces = case
    got, log = run_stream(pieces, accepted)
    assert got == reference(text, accepted)
    assert_markers_follow_citations(log)
    released = set(re.findall(r"\[(S\d+)\]", got))
    assert released <= accepted
    assert "[" not in re.sub(r"\[S\d+\]", "", got)  # every `[` opens an accepted marker


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab [S12],;\n", max_size=60), st.data())
def test_arbitrary_characters_and_splits(text, data):
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=6)))
    bounds = [0, *cuts, len(text)]
    pieces = [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
    got, log = run_stream(pieces, {"S1"})
    assert got == reference(text, {"S1"})
    assert_markers_follow_citations(log)


def test_engine_stream_sends_citations_before_their_markers(hashing_engine):
    events = list(hashing_engine.stream("How long do I have to return an item?",
                                        request_id="req-stream-1"))
    assert isinstance(events[0], MetaEvent) and events[0].request_id == "req-stream-1"
    assert isinstance(events[-1], DoneEvent)
    answer = events[-1].answer
    assert answer.grounded and answer.citations
    deltas = [e for e in events if isinstance(e, DeltaEvent)]
    assert "".join(d.text for d in deltas) == answer.answer
    log = [("citation", e.citation.label) if isinstance(e, CitationEvent) else ("text", e.text)
           for e in events if isinstance(e, CitationEvent | DeltaEvent)]
    assert_markers_follow_citations(log)
    streamed = [e.citation for e in events if isinstance(e, CitationEvent)]
    assert streamed == list(answer.citations)
    assert {c.chunk_id for c in streamed} <= set(answer.trace.retrieved)


def test_engine_stream_of_an_abstention_has_no_citations(hashing_engine):
    events = list(hashing_engine.stream("What is the capital of France?"))
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.answer.abstained
    assert not any(isinstance(e, CitationEvent) for e in events)
    assert "".join(e.text for e in events if isinstance(e, DeltaEvent)) == done.answer.answer


def test_markers_with_inline_quotes_can_be_decided_per_quote():
    def parse(content):
        m = re.fullmatch(r'\s*(S\d+):\s*"([^"]*)"\s*', content)
        return ((m.group(1), m.group(2)),) if m else None

    f = MarkerFilter(parse=parse, render=lambda key: f"[{key[0]}]")
    text = 'Fee is 5 [S1: "fee is 5"] and 6 [S1: "made up"] [S2].'
    out = ""
    for ch in text:  # token by token
        out += f.feed(ch)
        for key in f.pending:
            out += f.accept(key) if key[1] == "fee is 5" else f.reject(key)
    out += f.close()
    assert out == "Fee is 5 [S1] and 6."
