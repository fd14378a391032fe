"""Engine.stream with the OpenAI-compatible generator: the model's tokens arrive over real SSE
from the scripted server, each completed sentence goes through the gate, and only then its
citation events and text (markers through the marker filter) reach the client."""

from __future__ import annotations

import re
import threading

import httpx
import pytest

from citadel.answering.generators import get_generator
from citadel.answering.streaming import CitationEvent, DeltaEvent, DoneEvent, MetaEvent
from citadel.config import Settings
from citadel.engine import Engine
from citadel.server import create_app
from tests.live_server import live_server
from tests.llm_server import Fail, Hang, Reply, ScriptedLLM, Seen
from tests.server.test_http_streaming import check_stream, parse_sse

QUESTION = "How much does UK express delivery cost?"
FACT = "UK express delivery costs £9.95"
SECOND = "UK standard delivery takes 3–5 business days"


@pytest.fixture(scope="module")
def llm():
    with ScriptedLLM() as server:
        yield server


def make_engine(hashing_engine: Engine, llm: ScriptedLLM, model: str, **overrides) -> Engine:
    # support_threshold 0: every statement counts as answering, so the judgement stage lets
    # the scripted two-sentence answer through; what is pinned here is the streaming (its
    # own refusals are tested in tests/answering/test_judgement_engine.py).
    values = dict(home=hashing_engine.settings.home, embedder="hashing", generator="openai",
                  llm_base_url=llm.base_url, llm_model=model, llm_timeout=5.0,
                  llm_max_retries=1, llm_backoff=0.01, support_threshold=0.0)
    values.update(overrides)
    settings = Settings(**values)
    return Engine(settings, hashing_engine.index, hashing_engine.embedder,
                  get_generator(settings))


def stream(hashing_engine, llm, model, *steps, **settings):
    llm.script(model, *steps)
    return list(make_engine(hashing_engine, llm, model, **settings).stream(QUESTION))


def good(req: Seen) -> str:
    a, b = req.label_of(FACT), req.label_of(SECOND)
    return (f'Express delivery costs £9.95 [{a}: "{FACT}"]. '
            f'Standard delivery takes 3–5 business days [{b}: "{SECOND}"].')


def check(events) -> DoneEvent:
    """The stream invariants: meta first, done last, a marker only after its citation, the
    deltas add up to the final answer, citations streamed = citations in the answer."""
    assert isinstance(events[0], MetaEvent) and isinstance(events[-1], DoneEvent)
    announced: set[str] = set()
    text = ""
    for event in events[1:-1]:
        if isinstance(event, CitationEvent):
            announced.add(event.citation.label)
        else:
            assert isinstance(event, DeltaEvent)
            assert set(re.findall(r"\[(S\d+)\]", event.text)) <= announced
            assert "[" not in re.sub(r"\[S\d+\]", "", event.text)
            text += event.text
    done = events[-1]
    assert text == done.answer.answer
    assert [e.citation for e in events if isinstance(e, CitationEvent)] == list(
        done.answer.citations)
    return done


def test_tokens_split_mid_marker_stream_as_verified_sentences(hashing_engine, llm):
    def marker_split(text):  # `[S`, `1: "UK exp`, ... as separate SSE events
        return [p for p in re.split(r"(?<=[\[\":])", text) if p]

    events = stream(hashing_engine, llm, "e-split", Reply(good, chunks=marker_split))
    done = check(events)
    answer = done.answer
    assert answer.grounded and [c.quote for c in answer.citations] == [FACT, SECOND]
    a, b = (c.label for c in answer.citations)
    assert answer.answer == (f"Express delivery costs £9.95. [{a}] "
                             f"Standard delivery takes 3–5 business days. [{b}]")
    assert answer.trace.prompt_version == "grounded-stream-v2"
    assert llm.requests["e-split"][0].body["stream"] is True


def test_first_sentence_is_released_while_the_model_is_still_writing(hashing_engine, llm):
    release = threading.Event()
    text_len = 80  # hold the stream inside the second sentence (the first is ~70 chars)
    llm.script("e-early", Reply(good, chunk_size=1, hold_after=text_len, release=release))
    events = make_engine(hashing_engine, llm, "e-early").stream(QUESTION)
    seen = []
    try:
        for event in events:
            seen.append(event)
            if isinstance(event, DeltaEvent):
                break
        assert not release.is_set()  # the server has not sent the rest yet
        assert "Express delivery costs £9.95." in seen[-1].text
        assert any(isinstance(e, CitationEvent) for e in seen)
    finally:
        release.set()
    check(seen + list(events))


def test_a_sentence_with_an_invented_label_is_left_out(hashing_engine, llm):
    def half_invented(req: Seen) -> str:
        return (f'Express delivery costs £9.95 [{req.label_of(FACT)}: "{FACT}"]. '
                'Delivery is free on Sundays [S9: "Delivery is free on Sundays"].')

    done = check(stream(hashing_engine, llm, "e-s9", Reply(half_invented)))
    assert done.answer.grounded and "Sundays" not in done.answer.answer
    reasons = [d.reason for d in done.answer.trace.citations_dropped]
    assert "label_not_in_context" in reasons and len(done.answer.trace.attempts) == 1


def test_filename_citations_never_stream_and_the_answer_abstains(hashing_engine, llm):
    bad = Reply(f'{FACT} [Source: internal_spec_v3.pdf §4.2].')
    events = stream(hashing_engine, llm, "e-filename", bad)
    done = check(events)
    assert done.answer.abstained and done.answer.citations == ()
    assert not any(isinstance(e, CitationEvent) for e in events)
    assert all("internal_spec" not in e.text for e in events if isinstance(e, DeltaEvent))
    assert len(llm.requests["e-filename"]) == 2  # nothing was shown, so it was retried
    assert "not the label of a block" in llm.requests["e-filename"][1].user


def test_changed_number_quote_is_dropped(hashing_engine, llm):
    def changed(req: Seen) -> str:
        return f'UK express costs £7.95 [{req.label_of(FACT)}: "UK express delivery costs £7.95"].'

    done = check(stream(hashing_engine, llm, "e-number", Reply(changed)))
    assert done.answer.abstained and "7.95" not in done.answer.answer
    assert "quote_not_found" in [d.reason for d in done.answer.trace.citations_dropped]


def test_a_bad_first_attempt_is_retried_before_anything_is_shown(hashing_engine, llm):
    bad = Reply("Express delivery is cheap, around £5.")
    done = check(stream(hashing_engine, llm, "e-retry", bad, Reply(good)))
    answer = done.answer
    assert answer.grounded and len(answer.trace.attempts) == 2
    assert answer.trace.retry_reason == "uncited_sentence"
    assert "£5" not in answer.answer


def test_server_error_then_success_streams(hashing_engine, llm):
    done = check(stream(hashing_engine, llm, "e-500", Fail(500), Reply(good)))
    assert done.answer.grounded and len(llm.requests["e-500"]) == 2


def test_hang_past_the_timeout_streams_a_degraded_abstention(hashing_engine, llm):
    done = check(stream(hashing_engine, llm, "e-hang", Hang(10), llm_timeout=0.3,
                        llm_max_retries=0))
    assert done.answer.abstained and done.answer.degraded and done.answer.citations == ()
    assert "timed out" in done.answer.trace.degraded_reasons[0]


def test_stream_broken_after_a_released_sentence_keeps_only_verified_text(hashing_engine, llm):
    never = threading.Event()  # the model stalls mid-answer and never finishes
    try:
        done = check(stream(hashing_engine, llm, "e-stall",
                            Reply(good, chunk_size=1, hold_after=80, release=never),
                            llm_timeout=0.5))
    finally:
        never.set()
    answer = done.answer
    assert answer.grounded and answer.degraded
    assert [c.quote for c in answer.citations] == [FACT]
    assert "Standard delivery" not in answer.answer


def test_sse_endpoint_streams_the_model_through_the_gate(hashing_engine, llm):
    llm.script("e-http", Reply(good, chunk_size=2))
    engine = make_engine(hashing_engine, llm, "e-http")
    with live_server(create_app(engine)) as url:
        response = httpx.post(f"{url}/v1/answer/stream", json={"question": QUESTION},
                              headers={"X-Request-ID": "req-llm-1"}, timeout=30)
    assert response.status_code == 200
    events = parse_sse(response.text)
    answer = check_stream(events, response.headers["x-request-id"], QUESTION)
    assert answer["trace"]["client_request_id"] == "req-llm-1"
    assert answer["grounded"] and [c["quote"] for c in answer["citations"]] == [FACT, SECOND]


def test_a_streamed_refusal_with_a_citation_is_an_abstention(hashing_engine, llm):
    """The v1 failure: "I don't have enough information to answer that. [S1]" was shown as
    grounded. A refusal sentence is never released, with or without a marker."""
    def refusal(req: Seen) -> str:
        return (f'I don\'t have enough information to answer that. '
                f'[{req.label_of(FACT)}: "{FACT}"]')

    events = stream(hashing_engine, llm, "e-refusal", Reply(refusal))
    done = check(events)
    assert done.answer.abstained and not done.answer.grounded
    assert not any(isinstance(e, CitationEvent) for e in events)
    assert len(llm.requests["e-refusal"]) == 1


def test_a_streamed_quote_under_another_blocks_label_is_released_from_its_block(
        hashing_engine, llm):
    def slipped(req: Seen) -> str:
        right = req.label_of(FACT)
        wrong = next(label for label in req.blocks if label != right)
        return f'Express delivery costs £9.95 [{wrong}: "{FACT}"].'

    done = check(stream(hashing_engine, llm, "e-slip", Reply(slipped)))
    assert done.answer.grounded and [c.quote for c in done.answer.citations] == [FACT]
    assert done.answer.trace.attempts[0].relabelled == 1
