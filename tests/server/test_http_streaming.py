"""The SSE endpoint and request isolation, against a real uvicorn server on 127.0.0.1."""

import asyncio
import hashlib
import json
import logging
import re
import threading
import time

import httpx
import pytest

from citadel.answering.streaming import DeltaEvent, MetaEvent
from citadel.engine import Engine
from citadel.server import create_app
from tests.live_server import live_server

QUESTIONS = [
    "How long do I have to return an item?",
    "How much does express delivery cost?",
    "How long are gift cards valid?",
    "How do I delete my account?",
    "How long does the warranty last?",
    "Can I change my order after placing it?",
    "How do I track my order?",
    "Do you ship internationally?",
    "How do loyalty points work?",
    "Do you match prices?",
    "How do I cancel my subscription?",
    "How should I wash the jacket?",
    "What payment methods do you accept?",
    "When is customer support open?",
    "How do repairs work?",
    "What is the capital of France?",
    "Who won the 1998 world cup?",
    "How are refunds paid?",
    "What sizes do you have?",
    "How is my personal data used?",
]


def parse_sse(text: str) -> list[tuple[str, dict]]:
    events = []
    for frame in text.strip().split("\n\n"):
        kind = re.search(r"^event: (.*)$", frame, re.M).group(1)
        data = "\n".join(re.findall(r"^data: (.*)$", frame, re.M))
        events.append((kind, json.loads(data)))
    return events


@pytest.fixture(scope="module")
def server(hashing_engine):
    # One address sends 100 streams at once below: no per-address cap on streams here.
    settings = hashing_engine.settings.model_copy(update={"http_max_streams_per_client": 0})
    app = create_app(Engine(settings, hashing_engine.index, hashing_engine.embedder,
                            hashing_engine.generator))
    with live_server(app) as url:
        yield url, app


def check_stream(events: list[tuple[str, dict]], request_id: str, question: str) -> dict:
    kinds = [k for k, _ in events]
    assert kinds[0] == "meta" and kinds[-1] == "done", kinds
    assert events[0][1]["request_id"] == request_id
    answer = events[-1][1]["answer"]
    announced: set[str] = set()
    text = ""
    for kind, data in events:
        if kind == "citation":
            announced.add(data["citation"]["label"])
        elif kind == "delta":
            assert set(re.findall(r"\[(S\d+)\]", data["text"])) <= announced
            text += data["text"]
    assert text == answer["answer"]
    streamed = [d["citation"] for k, d in events if k == "citation"]
    assert streamed == answer["citations"]
    return answer


def check_answer(answer: dict, request_id: str, question: str) -> None:
    trace = answer["trace"]
    assert trace["request_id"] == request_id
    assert trace["question_sha256"] == hashlib.sha256(question.encode()).hexdigest()
    retrieved = set(trace["retrieved"])
    context = trace["context_labels"]
    for c in answer["citations"]:
        assert c["chunk_id"] in retrieved
        assert context[c["label"]] == c["chunk_id"]


def test_stream_events_arrive_in_order_with_citations_first(server):
    url, _ = server
    with httpx.Client(base_url=url, timeout=30) as client:
        r = client.post("/v1/answer/stream", json={"question": QUESTIONS[0]},
                        headers={"X-Request-ID": "s-1"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    rid = r.headers["x-request-id"]
    answer = check_stream(parse_sse(r.text), rid, QUESTIONS[0])
    assert answer["grounded"] and answer["trace"]["client_request_id"] == "s-1"
    check_answer(answer, rid, QUESTIONS[0])


def test_a_streamed_follow_up_names_its_standalone_question_in_meta_and_done(server):
    url, _ = server
    question = "And standard delivery?"
    with httpx.Client(base_url=url, timeout=30) as client:
        r = client.post("/v1/answer/stream", json={"question": question, "history": [
            {"question": "How much does UK express delivery cost?"}]})
    events = parse_sse(r.text)
    answer = check_stream(events, r.headers["x-request-id"], question)
    check_answer(answer, r.headers["x-request-id"], question)  # the hash is of what was asked
    asked = events[0][1]["standalone"]
    assert asked["question"] == "How much does UK standard delivery cost?"
    assert answer["standalone"] == asked and "£4.95" in answer["answer"]


def test_two_hundred_concurrent_requests_stay_isolated(server):
    url, _ = server

    async def one(client: httpx.AsyncClient, i: int) -> None:
        # A per-request nonce makes every question (and its hash) unique.
        question = f"{QUESTIONS[i % len(QUESTIONS)]} (ticket {i})"
        mine = f"iso-{i}"
        if i % 2:
            r = await client.post("/v1/answer/stream", json={"question": question},
                                  headers={"X-Request-ID": mine})
            assert r.status_code == 200, r.text
            answer = check_stream(parse_sse(r.text), r.headers["x-request-id"], question)
        else:
            r = await client.post("/v1/answer", json={"question": question},
                                  headers={"X-Request-ID": mine})
            assert r.status_code == 200, r.text
            answer = r.json()
        assert r.headers["x-client-request-id"] == answer["trace"]["client_request_id"] == mine
        check_answer(answer, r.headers["x-request-id"], question)
        return answer["grounded"]

    async def run() -> list[bool]:
        limits = httpx.Limits(max_connections=240, max_keepalive_connections=240)
        async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as client:
            return await asyncio.gather(*(one(client, i) for i in range(200)))

    grounded = asyncio.run(run())
    assert len(grounded) == 200
    assert any(grounded) and not all(grounded)  # answers and abstentions were both exercised


class SlowStreamEngine(Engine):
    """An engine whose stream never ends on its own, recording when it is closed."""

    def __init__(self, base: Engine, pause: float = 0.02, text: str = "more ") -> None:
        super().__init__(base.settings, base.index, base.embedder, base.generator)
        self.closed: list[str] = []
        self.started = threading.Event()
        self.pause = pause  # between deltas
        self.text = text  # of each delta

    def stream(self, question, *, request_id=None, **kwargs):
        self.validate_question(question)

        def events():
            try:
                yield MetaEvent(request_id=request_id, snapshot_id=self.index.snapshot_id,
                                backend=self.index.backend)
                self.started.set()
                while True:
                    time.sleep(self.pause)
                    yield DeltaEvent(text=self.text)
            finally:
                self.closed.append(request_id)

        return events()


def test_client_disconnect_mid_stream_closes_the_stream(hashing_engine, caplog):
    caplog.set_level(logging.INFO, logger="citadel.http")
    engine = SlowStreamEngine(hashing_engine)
    app = create_app(engine)
    with live_server(app) as url:
        with httpx.Client(base_url=url, timeout=30) as client, client.stream(
            "POST", "/v1/answer/stream", json={"question": "Anything?"},
        ) as r:
            rid = r.headers["x-request-id"]
            lines = r.iter_lines()
            assert next(lines) == "event: meta"
            assert engine.started.wait(10)
            assert app.state.streams.open() == {rid}
        # The client went away: the server must close the iterator and forget the stream.
        deadline = time.monotonic() + 10
        while (engine.closed != [rid] or app.state.streams.open()) and \
                time.monotonic() < deadline:
            time.sleep(0.05)
        assert engine.closed == [rid]
        assert app.state.streams.open() == frozenset()
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "citadel.http"
             and r.getMessage().startswith("{")]
    assert [line["status"] for line in lines if line["request_id"] == rid] == [200]


def test_a_failing_stream_ends_with_an_error_event(hashing_engine):
    class Failing(Engine):
        def stream(self, question, *, request_id=None, **kwargs):
            def events():
                yield MetaEvent(request_id=request_id, snapshot_id="kb-x", backend="local")
                raise RuntimeError("boom")
            return events()

    engine = Failing(hashing_engine.settings, hashing_engine.index, hashing_engine.embedder,
                     hashing_engine.generator)
    app = create_app(engine)
    with live_server(app) as url, httpx.Client(base_url=url, timeout=30) as client:
        r = client.post("/v1/answer/stream", json={"question": "Anything?"})
    events = parse_sse(r.text)
    assert [k for k, _ in events] == ["meta", "error"]
    assert events[1][1]["request_id"] == r.headers["x-request-id"]
    assert "boom" not in events[1][1]["message"]
    assert app.state.streams.open() == frozenset()


class CountingEngine(Engine):
    """Records how many answers run at the same moment."""

    def __init__(self, base: Engine, limit: int) -> None:
        settings = base.settings.model_copy(update={"max_concurrent_answers": limit})
        super().__init__(settings, base.index, base.embedder, base.generator)
        self.lock = threading.Lock()
        self.running = 0
        self.peak = 0

    def answer(self, question, **kwargs):
        with self.lock:
            self.running += 1
            self.peak = max(self.peak, self.running)
        try:
            time.sleep(0.05)
            return super().answer(question, **kwargs)
        finally:
            with self.lock:
                self.running -= 1


def test_answers_computed_at_once_are_capped_by_configuration(hashing_engine):
    engine = CountingEngine(hashing_engine, limit=2)
    with live_server(create_app(engine)) as url:

        async def run() -> list[int]:
            async with httpx.AsyncClient(base_url=url, timeout=60) as client:
                calls = [client.post(path, json={"question": QUESTIONS[i % 5]})
                         for i in range(12)
                         for path in ("/v1/answer", "/v1/answer/stream")]
                return [r.status_code for r in await asyncio.gather(*calls)]

        assert set(asyncio.run(run())) == {200}
    assert engine.peak == 2
