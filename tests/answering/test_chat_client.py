"""The chat-completions client against a real local HTTP server: SSE, retries, errors."""

import email.utils
import time

import httpx
import pytest

from citadel.answering.generators.chat_client import ChatClient, ChatConfig, ChatError, _retry_after
from tests.llm_server import Fail, Hang, Reply, ScriptedLLM

MESSAGES = [{"role": "user", "content": "hi"}]


@pytest.fixture(scope="module")
def llm():
    with ScriptedLLM() as server:
        yield server


def client(llm: ScriptedLLM, model: str, **kw) -> ChatClient:
    return ChatClient(ChatConfig(base_url=llm.base_url, model=model, backoff=0.01, **kw))


def test_stream_yields_deltas_that_add_up_with_markers_split_across_chunks(llm):
    text = "Express costs £9.95 [S1]. Standard is free [S2]."
    llm.script("c-split", Reply(text, chunks=["Express costs £9.95 [", "S", "1]. Standard",
                                              " is free [S2", "]."]))
    deltas = list(client(llm, "c-split").stream(MESSAGES))
    assert deltas == ["Express costs £9.95 [", "S", "1]. Standard", " is free [S2", "]."]
    assert llm.requests["c-split"][0].body["stream"] is True


def test_stream_retries_a_server_error_before_the_first_delta(llm):
    llm.script("c-stream-500", Fail(502), Reply("hello there"))
    assert "".join(client(llm, "c-stream-500").stream(MESSAGES)) == "hello there"
    assert len(llm.requests["c-stream-500"]) == 2


def test_stream_that_hangs_times_out_with_a_chat_error(llm):
    llm.script("c-stream-hang", Hang(10))
    with pytest.raises(ChatError, match="timed out"):
        list(client(llm, "c-stream-hang", timeout=0.3, max_retries=0).stream(MESSAGES))


def test_complete_returns_the_first_choice(llm):
    llm.script("c-complete", Reply("plain text"))
    assert client(llm, "c-complete").complete(MESSAGES) == "plain text"


def test_a_reply_that_is_not_a_chat_completion_is_an_error():
    with ScriptedLLM() as server:
        # Ask for a path the server does not serve: a JSON 404, not retried.
        cfg = ChatConfig(base_url=server.base_url + "/nothing", model="x", max_retries=3)
        with pytest.raises(ChatError, match="HTTP 404"):
            ChatClient(cfg).complete(MESSAGES)


def test_error_messages_and_reprs_hide_credentials():
    cfg = ChatConfig(base_url="https://user:pw@llm.example:8443/v1?key=abc", model="m",
                     api_key="sk-secret")
    assert cfg.safe_endpoint == "https://llm.example:8443/v1/chat/completions"
    for text in (repr(cfg), repr(ChatClient(cfg))):
        assert "sk-secret" not in text and "pw" not in text


def test_retry_after_accepts_seconds_and_http_dates():
    def response(value):
        return httpx.Response(429, headers={"Retry-After": value})

    assert _retry_after(response("7")) == 7.0
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= _retry_after(response(later)) <= 31
    assert _retry_after(response("soon")) is None
