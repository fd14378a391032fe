"""`citadel.client`: the typed records, the typed errors, and retries on 503 only."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from citadel.answering.streaming import CitationEvent, DeltaEvent, DoneEvent, MetaEvent
from citadel.client import (
    AsyncClient,
    AuthenticationError,
    Client,
    ConnectionFailed,
    InvalidRequest,
    NotFound,
    ServerError,
    StreamError,
    Timeout,
    Unavailable,
)
from citadel.records import Answer, Citation
from citadel.server.listen import listening_socket
from tests.doors import ACME_KEY, ANSWERED, PRIVATE, UNANSWERABLE


@pytest.fixture(scope="module")
def citadel(doors_url):
    with Client(doors_url, api_key=ACME_KEY) as client:
        yield client


def test_answer_returns_the_engines_records(citadel):
    answer = citadel.answer(ANSWERED)
    assert isinstance(answer, Answer) and all(isinstance(c, Citation) for c in answer.citations)
    assert answer.grounded and answer.conflict is not None


def test_the_key_decides_the_tenant(citadel, doors_url):
    assert "ORCHID-7731" in citadel.answer(PRIVATE).answer
    with Client(doors_url) as anonymous:
        assert anonymous.answer(PRIVATE).abstained


def test_stream_yields_typed_events_whose_deltas_make_the_answer(citadel):
    events = list(citadel.stream(ANSWERED))
    assert isinstance(events[0], MetaEvent) and isinstance(events[-1], DoneEvent)
    text = "".join(e.text for e in events if isinstance(e, DeltaEvent))
    assert text == events[-1].answer.answer == citadel.answer(ANSWERED).answer
    assert any(isinstance(e, CitationEvent) for e in events)


def test_search_chunk_and_verify(citadel):
    hits = citadel.search("return an item", k=3).hits
    assert 0 < len(hits) <= 3
    view = citadel.chunk(hits[0].chunk_id, window=0)
    assert view.content == hits[0].content
    answer = citadel.answer(ANSWERED)
    assert citadel.verify(answer).ok
    forged = answer.model_dump(mode="json")
    forged["answer"] = forged["answer"].replace("30 days", "365 days")
    report = citadel.verify(forged)
    assert not report.ok and report.answer_problems


def test_async_client_does_the_same(doors_url):
    async def go():
        async with AsyncClient(doors_url, api_key=ACME_KEY) as client:
            answer = await client.answer(ANSWERED)
            events = [e async for e in client.stream(ANSWERED)]
            hits = (await client.search("return an item")).hits
            report = await client.verify(answer)
            return answer, events, hits, report

    answer, events, hits, report = asyncio.run(go())
    assert events[-1].answer.answer == answer.answer
    assert hits and report.ok


@pytest.mark.parametrize(("call", "error"), [
    (lambda c: c.answer("   "), InvalidRequest),
    (lambda c: c.chunk("no-such-chunk#1"), NotFound),
    (lambda c: c.verify({"no": "citations"}), InvalidRequest),
    (lambda c: list(c.stream("")), InvalidRequest),
])
def test_errors_are_typed_and_say_what_to_do(citadel, call, error):
    with pytest.raises(error) as raised:
        call(citadel)
    assert raised.value.status in {404, 422} and raised.value.message
    assert raised.value.request_id


def test_an_unknown_key_is_an_authentication_error(doors_url):
    with Client(doors_url, api_key="not-a-key-0123456789") as client, \
            pytest.raises(AuthenticationError, match="unknown API key"):
        client.answer(UNANSWERABLE)


# --- retries, timeouts and transport errors (a scripted transport) ----------------------------


def scripted(*statuses: int, headers: dict[str, str] | None = None):
    """A transport answering with `statuses` in turn (then 200s), and the requests it saw."""
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        status = statuses[len(seen) - 1] if len(seen) <= len(statuses) else 200
        body = ({"error": {"code": "x", "message": f"status {status}"}} if status >= 400
                else {"query": "q", "snapshot_id": "kb-1", "hits": []})
        return httpx.Response(status, json=body, headers=headers or {})

    return httpx.MockTransport(handle), seen


def test_a_503_is_retried_with_backoff_until_it_passes():
    transport, seen = scripted(503, 503)
    with Client("http://citadel.test", retries=3, backoff=0, transport=transport) as client:
        assert client.search("q").hits == []
    assert len(seen) == 3


def test_a_503_that_persists_raises_unavailable_after_the_retries():
    transport, seen = scripted(503, 503, 503)
    with Client("http://citadel.test", retries=2, backoff=0, transport=transport) as client, \
            pytest.raises(Unavailable):
        client.search("q")
    assert len(seen) == 3


@pytest.mark.parametrize(("status", "error"), [(500, ServerError), (401, AuthenticationError),
                                               (422, InvalidRequest), (404, NotFound)])
def test_nothing_but_503_is_retried(status, error):
    transport, seen = scripted(status)
    with Client("http://citadel.test", backoff=0, transport=transport) as client, \
            pytest.raises(error):
        client.search("q")
    assert len(seen) == 1


def test_retry_after_is_honoured(monkeypatch):
    waits: list[float] = []
    monkeypatch.setattr("citadel.client.client.time.sleep", waits.append)
    transport, _ = scripted(503, 503, headers={"Retry-After": "2"})
    with Client("http://citadel.test", backoff=10, transport=transport) as client:
        client.search("q")
    assert waits == [2.0, 2.0]


def test_a_timeout_is_a_timeout_error():
    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    with Client("http://citadel.test", transport=httpx.MockTransport(slow)) as client, \
            pytest.raises(Timeout):
        client.answer("q")


def test_a_closed_port_is_a_connection_error():
    sock = listening_socket("127.0.0.1", 0)
    port = sock.getsockname()[1]
    sock.close()
    with Client(f"http://127.0.0.1:{port}", retries=0) as client, \
            pytest.raises(ConnectionFailed, match="cannot reach"):
        client.answer("q")


def test_an_error_event_in_a_stream_raises_stream_error():
    def handle(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=(
            b'event: error\ndata: {"type": "error", "code": "internal", '
            b'"message": "the answer failed", "request_id": "r1"}\n\n'))

    with Client("http://citadel.test", transport=httpx.MockTransport(handle)) as client, \
            pytest.raises(StreamError, match="the answer failed") as raised:
        list(client.stream("q"))
    assert raised.value.request_id == "r1"


FOLLOW_UP = "How long do they have to return an item?"
ASKED = "How long do premium members have to return an item?"


def test_a_conversation_asks_each_question_with_the_ones_before(citadel):
    thread = citadel.conversation()
    first = thread.ask(PRIVATE)
    assert first.standalone is None and "ORCHID-7731" in first.answer
    second = thread.ask(FOLLOW_UP)
    assert second.standalone.question == ASKED and "90 days" in second.answer
    assert [t.question for t in thread.turns] == [PRIVATE, FOLLOW_UP]
    events = list(thread.stream("What private code do they quote?"))
    assert events[0].type == "meta" and events[-1].type == "done"
    assert len(thread.turns) == 3
    thread.reset()
    assert thread.ask(FOLLOW_UP).standalone is None


def test_an_async_conversation_does_the_same(doors_url):
    async def go():
        async with AsyncClient(doors_url, api_key=ACME_KEY) as client:
            thread = client.conversation()
            await thread.ask(PRIVATE)
            answer = await thread.ask(FOLLOW_UP)
            events = [e async for e in thread.stream("Is it free?")]
            return answer, events, len(thread.turns)

    answer, events, turns = asyncio.run(go())
    assert answer.standalone.question == ASKED
    assert events[-1].type == "done" and turns == 3
