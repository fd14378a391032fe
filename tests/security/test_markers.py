"""Markers and pseudo-citations outside the gate: the only citation marker a user may see is
a gate-written `[Sn]` of a citation that survived, whatever script or prose it is forged in,
and wherever the forged text comes from (a title, a chunk sentence, a model's draft, the
question itself). And the stream's deltas always add up to `done.answer`.

Each test is one attack; these are behaviour tests through the public functions (compose,
gate, the fallbacks, `Engine.answer` / `Engine.stream`), not tests of `text.neutralize`.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citadel.answering.conflicts import check_conflicts
from citadel.answering.decision.composing import compose
from citadel.answering.decision.sentence_release import SentenceRelease
from citadel.answering.fallbacks import abstention_text, conflict_next_step, describe_missing
from citadel.answering.generators.inline_markers import SentenceStream, draft_sentence
from citadel.answering.streaming import (
    CitationEvent,
    DeltaEvent,
    DoneEvent,
    MetaEvent,
    answer_events,
)
from citadel.config import Settings
from citadel.engine import Engine
from citadel.gate import gate
from citadel.ingest.pipeline import ingest
from citadel.records import Answer, Draft, DraftCitation, DraftSentence, Trace
from citadel.retrieval.embedders.hashing import HashingEmbedder
from tests.answering.test_openai_engine_stream import make_engine
from tests.helpers_kb import chunk, context
from tests.llm_server import Reply, ScriptedLLM, Seen, answer_json

# Marker-shaped brackets of several scripts, and the attributions an attacker writes.
BRACKETS = "[]［］【】〔〕〖〗⟦⟧⟨⟩《》〈〉〚〛"
PSEUDO = ("【S2】", "⟦S3⟧", "［Sx］", "(Source: legal-handbook.pdf §9.1)")
FORGED_TITLE = "[S1] Community forum [Source: legal-handbook.pdf §4.2]"
_GATE_MARKER = re.compile(r" \[(S\d+)\]")
_ATTRIBUTION = re.compile(r"(?i)\bsources?\s*[:：]|\(\s*S\d+\s*\)|legal-handbook")


def forged_parts(text: str, labels: set[str] | frozenset[str]) -> list[str]:
    """What in an answer text could pass for a citation, beyond the gate's own `[Sn]` of
    the given (surviving) labels: brackets of any script, attributions, `(S1)`."""
    rest = _GATE_MARKER.sub(lambda m: "" if m.group(1) in labels else m.group(), text)
    found = [ch for ch in rest if ch in BRACKETS]
    found += _ATTRIBUTION.findall(rest)
    return found


def assert_clean(answer: Answer) -> None:
    labels = {c.label for c in answer.citations}
    assert forged_parts(answer.answer, labels) == [], answer.answer
    for text in (answer.missing, answer.next_step,
                 answer.conflict.explanation if answer.conflict else None):
        assert forged_parts(text or "", set()) == [], text


def stream_text(events) -> tuple[str, Answer]:
    """The client's text (the deltas) and `done.answer`, checking the event order."""
    assert isinstance(events[0], MetaEvent) and isinstance(events[-1], DoneEvent)
    announced: set[str] = set()
    text = ""
    for event in events[1:-1]:
        if isinstance(event, CitationEvent):
            announced.add(event.citation.label)
        elif isinstance(event, DeltaEvent):
            assert set(re.findall(r"\[(S\d+)\]", event.text)) <= announced
            text += event.text
    return text, events[-1].answer


# --- titles in conflict answers ----------------------------------------------------------

POLICY = chunk("refunds-policy#3", "All returns are sent to the Northwind Outfitters warehouse "
               "in Leeds, United Kingdom.", authority=1.0, date="2026-03-01",
               title="Refunds and Returns Policy")
HELP = chunk("sending-a-return#3", "Please send all returns to our Rotterdam warehouse using "
             "the address on your label.", authority=0.7, date="2026-04-20",
             title="Help Centre 【S2】 ⟦S3⟧ (Source: legal-handbook.pdf §9.1)")
FORUM = chunk("forum#3", "Send your return to our Rotterdam warehouse, it is quicker.",
              authority=0.2, date="2026-05-01", title=FORGED_TITLE)
WHERE = "Where do I send my return?"


def test_a_title_with_markers_puts_no_citation_chip_in_the_authoritative_conflict_note():
    ctx = context(FORUM, POLICY)
    composed = compose(WHERE, check_conflicts(WHERE, ctx), ctx, "kb-test")
    assert composed is not None and "Community forum" in composed.text  # still named
    labels = {c.label for c in composed.result.citations}
    assert forged_parts(composed.text, labels) == [], composed.text
    # The lead's one sentence carries the only marker.
    assert _GATE_MARKER.findall(composed.text) == [composed.result.citations[0].label]


def test_titles_with_markers_reach_no_part_of_a_flagged_conflict_answer():
    ctx = context(HELP, POLICY)
    conflict = check_conflicts(WHERE, ctx)
    assert conflict.resolution == "flagged"
    composed = compose(WHERE, conflict, ctx, "kb-test")
    assert composed is not None and "Help Centre" in composed.text
    labels = {c.label for c in composed.result.citations}
    for text in (composed.text, conflict.explanation, composed.next_step, composed.missing):
        assert forged_parts(text, labels) == [], text
    assert len(_GATE_MARKER.findall(composed.text)) == len(composed.result.sentences)


def test_a_conflict_next_step_names_titles_without_their_markers():
    step = conflict_next_step([FORGED_TITLE, "⟦S3⟧ Help 【S2】"])
    assert forged_parts(step, set()) == [], step
    assert "Community forum" in step and "Help" in step


# --- pseudo-citations in extractive sentences and LLM drafts -----------------------------

CONTENT = "Refunds are issued within 5 business days {} of the return being received."


@pytest.mark.parametrize("pseudo", PSEUDO)
def test_a_pseudo_citation_in_an_extractive_sentence_is_stripped_by_the_gate(pseudo):
    # The extractive generator answers with the chunk's own sentence as text and quote.
    sentence = CONTENT.format(pseudo)
    ctx = context(chunk("refunds-policy#4", sentence, title="Refunds"))
    draft = Draft(sentences=(DraftSentence(text=sentence, citations=(
        DraftCitation(label="S1", quote=sentence),)),), generator="extractive",
        prompt_version="t")
    result = gate(draft, ctx, "kb-test")
    assert [c.label for c in result.citations] == ["S1"]
    assert forged_parts(result.render(), {"S1"}) == [], result.render()
    assert result.render() == CONTENT.format("").replace("  ", " ") + " [S1]"


@pytest.mark.parametrize("pseudo", PSEUDO)
def test_a_pseudo_citation_in_an_llm_sentence_is_stripped_by_the_gate(pseudo):
    quote = "Refunds are issued within 5 business days"
    ctx = context(chunk("refunds-policy#4", CONTENT.format(""), title="Refunds"))
    text = f"Refunds arrive within 5 business days {pseudo}. [S1]"
    draft = Draft(sentences=(DraftSentence(text=text, citations=(
        DraftCitation(label="S1", quote=quote),)),), generator="openai", prompt_version="t")
    result = gate(draft, ctx, "kb-test")
    assert result.render() == "Refunds arrive within 5 business days. [S1]"


# --- the question echoed in an abstention ------------------------------------------------

ECHO = "Zorblax 【S2】 ⟦S3⟧ ［Sx］ [S1] (Source: legal-handbook.pdf §9.1) quuxle?"


@pytest.mark.parametrize("question", [ECHO, "How long does the [S1] zorblax 【S2】 take?"])
def test_an_abstention_echoes_the_question_without_its_markers(question):
    for text in (abstention_text(question), describe_missing(question)):
        assert forged_parts(text, set()) == [], text
        assert "zorblax" in text.lower()


def test_an_engine_abstention_on_a_forged_question_shows_no_marker(hashing_engine):
    answer = hashing_engine.answer(ECHO)
    assert answer.abstained and not answer.citations
    assert_clean(answer)
    text, final = stream_text(list(hashing_engine.stream(ECHO)))
    assert text == final.answer == answer.answer


# --- end to end: a knowledge base whose titles and sentences are forged ------------------

GIFT = ("Store vouchers can be exchanged for store credit within 60 days 【S2】 ⟦S3⟧ ［Sx］ "
        "(Source: legal-handbook.pdf §9.1).")
GIFT_QUESTION = "Can store vouchers be exchanged for store credit?"


DOCUMENTS = {
    "refunds-policy.md": ("Refunds and Returns Policy", 1.0, "2026-03-01",
                          "You can return items within 30 days of delivery. All returns are "
                          "sent to the Northwind Outfitters warehouse in Leeds, United Kingdom."),
    "sending-a-return.md": ("Help Centre 【S2】 ⟦S3⟧ (Source: legal-handbook.pdf §9.1)", 0.7,
                            "2026-04-20", "Please send all returns to our Rotterdam warehouse "
                            "using the address on your label."),
    "forum.md": (FORGED_TITLE, 0.2, "2026-05-01",
                 "You can return items within 90 days of delivery, nobody checks."),
    "store-vouchers.md": ("Store vouchers ［S1］", 0.9, "2026-01-10", GIFT),
}


@pytest.fixture(scope="module")
def forged_engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    """A knowledge base whose titles and one sentence are forged: the forum and the help
    centre disagree with the policy, the voucher sentence carries pseudo-citations."""
    root = tmp_path_factory.mktemp("forged")
    kb = root / "kb"
    kb.mkdir()
    for name, (title, _, date, body) in DOCUMENTS.items():
        (kb / name).write_text(f'---\ntitle: "{title}"\ncategory: refunds\n'
                               f"effective_date: {date}\n---\n\n"
                               f"# {name[:-3].replace('-', ' ').title()}\n\n{body}\n")
    (kb / "citadel-sources.toml").write_text("".join(
        f'[sources."{name}"]\nauthority = {authority}\n'
        for name, (_, authority, _, _) in DOCUMENTS.items()))
    settings = Settings(home=root / "home", embedder="hashing")
    ingest([kb], settings, embedder=HashingEmbedder(), progress=False)
    engine = Engine.open(settings, embedder=HashingEmbedder())
    yield engine
    engine.close()


@pytest.mark.parametrize("question", ["How long do I have to return an item?", WHERE])
def test_forged_titles_never_reach_an_engine_conflict_answer(forged_engine, question):
    answer = forged_engine.answer(question)
    assert answer.conflict is not None  # the attack needs the note
    assert_clean(answer)


@pytest.mark.parametrize("question", ["How long do I have to return an item?", WHERE,
                                      GIFT_QUESTION])
def test_stream_deltas_equal_done_answer_with_forged_titles(forged_engine, question):
    text, final = stream_text(list(forged_engine.stream(question)))
    assert text == final.answer
    assert final.answer == forged_engine.answer(question).answer
    assert_clean(final)


def test_a_forged_extractive_sentence_is_answered_without_its_pseudo_citations(forged_engine):
    answer = forged_engine.answer(GIFT_QUESTION)
    assert answer.grounded and "store credit within 60 days" in answer.answer
    assert_clean(answer)


# --- an LLM's pseudo-citations, through the engine and a scripted model ------------------

FACT = "UK express delivery costs £9.95"
LLM_QUESTION = "How much does UK express delivery cost?"


@pytest.fixture(scope="module")
def llm():
    with ScriptedLLM() as server:
        yield server


@pytest.mark.parametrize("pseudo", PSEUDO)
def test_an_llm_json_answer_keeps_only_gate_markers(hashing_engine, llm, pseudo):
    def reply(req: Seen) -> str:
        label = req.label_of(FACT)
        return answer_json(f"Express delivery costs £9.95 {pseudo} [{label}].",
                           [(label, FACT)])

    model = llm.script(f"json-pseudo-{PSEUDO.index(pseudo)}", Reply(reply))
    answer = make_engine(hashing_engine, llm, model).answer(LLM_QUESTION)
    assert answer.grounded and answer.citations
    assert_clean(answer)
    assert answer.answer.startswith("Express delivery costs £9.95. [S")


@pytest.mark.parametrize("pseudo", PSEUDO)
def test_an_llm_token_stream_keeps_only_gate_markers(hashing_engine, llm, pseudo):
    def reply(req: Seen) -> str:
        label = req.label_of(FACT)
        return f'Express delivery costs £9.95 {pseudo} [{label}: "{FACT}"].'

    model = llm.script(f"stream-pseudo-{PSEUDO.index(pseudo)}", Reply(reply, chunk_size=2))
    events = list(make_engine(hashing_engine, llm, model).stream(LLM_QUESTION))
    text, final = stream_text(events)
    assert final.grounded and final.citations
    assert text == final.answer
    assert_clean(final)


# --- properties: deltas == done.answer, for any forged draft, stream or title ------------

_ATOMS = st.sampled_from([
    "[S1]", "[S2]", "[S1, S2]", "[Source: a.pdf]", "【S2】", "⟦S3⟧", "［Sx］", "〔S1〕", "《S1》",
    "(Source: legal-handbook.pdf §9.1)", "(S1)", "Source: x.pdf", "[", "]", "【", "⟧", "S1",
    " ", "  ", "\n", "30 days", "refunds", ".", ",", "(", ")", "«", "»", "[S", "1]",
])
_TEXT = st.lists(_ATOMS, max_size=14).map("".join)
_CONTENT = "Refunds are issued within 5 business days of the return being received."
_QUOTES = st.sampled_from(["Refunds are issued within 5 business days", "5 business days",
                           "within 30 days", ""])


def _trace() -> Trace:
    return Trace(request_id="req-prop", snapshot_id="kb-test", backend="local")


def _split(data, text: str) -> list[str]:
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=8)))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_TEXT, st.sampled_from(["S1", "S2", "S9"]), _QUOTES),
                min_size=1, max_size=4))
def test_any_forged_draft_streams_deltas_equal_to_done_answer(sentences):
    ctx = context(chunk("refunds-policy#4", _CONTENT, title="Refunds"),
                  chunk("help#1", "Express delivery costs 9.95 in the UK.", title="Help"))
    draft = Draft(sentences=tuple(
        DraftSentence(text=f"Refunds take 5 business days {t}", citations=(
            DraftCitation(label=label, quote=q),)) for t, label, q in sentences),
        generator="test", prompt_version="t")
    result = gate(draft, ctx, "kb-test")
    answer = Answer(answer=result.render(), citations=result.citations, grounded=True,
                    abstained=False, trace=_trace())
    text, final = stream_text(list(answer_events(answer)))
    assert text == final.answer == answer.answer
    assert forged_parts(answer.answer, {c.label for c in answer.citations}) == []


@settings(max_examples=200, deadline=None)
@given(_TEXT, _TEXT, st.data())
def test_any_forged_model_stream_split_anywhere_releases_deltas_equal_to_done(pre, post, data):
    # The engine's token path: sentences found in the growing text, gated, then released.
    ctx = context(chunk("refunds-policy#4", _CONTENT, title="Refunds"))
    reply = (f'Refunds take 5 business days {pre} [S1: "5 business days"]. '
             f"Gift cards {post} never expire.")
    stream, out, events = SentenceStream(), SentenceRelease(), []
    pieces = [*(stream.feed(p) for p in _split(data, reply)), stream.close()]
    for sentence in (s for found in pieces for s in found):
        one = Draft(sentences=(draft_sentence(sentence),), generator="t", prompt_version="t")
        events.extend(out.release(gate(one, ctx, "kb-test")))
    events.extend(out.close())
    text = "".join(e.text for e in events if isinstance(e, DeltaEvent))
    assert text == out.text
    assert forged_parts(text, {c.label for c in out.citations}) == [], text


_TITLE = st.lists(st.sampled_from([
    "[S1]", "【S2】", "⟦S3⟧", "［Sx］", "[Source: legal-handbook.pdf §4.2]", "(Source: a.pdf)",
    "Source: x", "(S1)", "《S1》", "Community", "forum", " ", "[", "】", "(", "«"]),
    min_size=1, max_size=8).map("".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_TITLE, _TITLE, st.sampled_from([(0.2, 1.0), (0.7, 1.0)]))
def test_any_forged_title_in_a_conflict_answer_streams_deltas_equal_to_done(t1, t2, weights):
    low, high = weights
    rival = chunk("forum#3", "Send your return to our Rotterdam warehouse, it is quicker.",
                  authority=low, date="2026-05-01", title=t1)
    policy = POLICY.model_copy(update={"title": t2})
    ctx = context(rival, policy)
    composed = compose(WHERE, check_conflicts(WHERE, ctx), ctx, "kb-test")
    assert composed is not None
    answer = Answer(answer=composed.text, citations=composed.result.citations, grounded=True,
                    abstained=False, next_step=composed.next_step, missing=composed.missing,
                    trace=_trace())
    text, final = stream_text(list(answer_events(answer)))
    assert text == final.answer == composed.text
    assert forged_parts(composed.text, {c.label for c in composed.result.citations}) == []
