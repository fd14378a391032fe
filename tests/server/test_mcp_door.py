"""The MCP door, called with the official `mcp` SDK's client: `citadel mcp` as a subprocess
over stdio, and `/mcp` of a live server over streamable HTTP."""

from __future__ import annotations

import asyncio
import os
import sys

import httpx
import httpx2
import jsonschema
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from citadel.client import Client as CitadelClient
from citadel.server.mcp_door import chunk_uri
from tests.doors import ACME_KEY, ANSWERED, GLOBEX_KEY, PRIVATE, UNANSWERABLE, doors_env, leaked


def http_client(url: str, key: str | None) -> Client:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return Client(streamable_http_client(f"{url}/mcp", http_client=httpx2.AsyncClient(
        headers=headers, timeout=60)))


def stdio_client(home, key: str | None) -> Client:
    env = {**os.environ, **doors_env(home)}
    if key:
        env["CITADEL_MCP_API_KEY"] = key
    return Client(StdioServerParameters(command=sys.executable, args=["-m", "citadel", "mcp"],
                                        env=env))


def run(coro):
    return asyncio.run(coro)


async def tour(client: Client) -> dict:
    """Everything a client does once: list, answer, search, verify, read a chunk."""
    async with client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        answered = await client.call_tool("answer", {"question": ANSWERED})
        private = await client.call_tool("answer", {"question": PRIVATE})
        abstained = await client.call_tool("answer", {"question": UNANSWERABLE})
        found = await client.call_tool("search", {"query": "return an item", "k": 10})
        verified = await client.call_tool("verify", {"receipt": answered.structured_content})
        first = answered.structured_content["citations"][0]["chunk_id"]
        chunk = await client.read_resource(chunk_uri(first))
        templates = (await client.list_resource_templates()).resource_templates
        empty = await client.call_tool("answer", {"question": "   "})
        followed = await client.call_tool("answer", {
            "question": "How long do they have to return an item?",
            "history": [{"question": PRIVATE, "answer": "Quote ORCHID-7731. [S1]"}]})
        too_long = await client.call_tool("answer", {
            "question": "And for Globex?", "history": [{"question": PRIVATE}] * 9})
    return locals()


@pytest.fixture(scope="module")
def over_stdio(doors_engine):
    return run(tour(stdio_client(doors_engine.settings.home, ACME_KEY)))


@pytest.fixture(scope="module")
def over_http(doors_url):
    return run(tour(http_client(doors_url, ACME_KEY)))


@pytest.fixture(params=["stdio", "http"])
def seen(request):
    return request.getfixturevalue(f"over_{request.param}")


def test_tools_are_read_only_and_typed(seen):
    tools = seen["tools"]
    assert set(tools) == {"answer", "search", "verify"}
    for tool in tools.values():
        assert tool.annotations.read_only_hint and not tool.annotations.destructive_hint
        assert tool.output_schema and tool.description
    assert seen["templates"][0].uri_template == "citadel://chunks/{chunk_id}"


@pytest.mark.parametrize("call", ["answered", "abstained", "found", "verified"])
def test_structured_output_validates_against_the_declared_schema(seen, call):
    name = {"answered": "answer", "abstained": "answer", "found": "search",
            "verified": "verify"}[call]
    result = seen[call]
    assert not result.is_error
    jsonschema.validate(result.structured_content, seen["tools"][name].output_schema)


def test_answer_carries_verified_citations_with_links_and_a_readable_text(seen):
    result = seen["answered"]
    answer = result.structured_content
    assert not answer["abstained"] and answer["conflict"]["resolution"] == "authoritative"
    text = result.content[0].text
    assert text.startswith(answer["answer"])
    for c in answer["citations"]:
        assert f'[{c["label"]}]' in answer["answer"] and f'"{c["quote"]}"' in text
        assert c["url"] in text and "#doc=" in c["url"]
        assert c["snapshot_id"] and len(c["content_sha256"]) == 64


def test_the_mcp_answer_has_the_same_citations_as_v1_answer(over_http, doors_url):
    with CitadelClient(doors_url, api_key=ACME_KEY) as citadel:
        answer = citadel.answer(ANSWERED)
    door = [{k: v for k, v in c.items() if k != "url"}
            for c in over_http["answered"].structured_content["citations"]]
    assert door == [c.model_dump(mode="json") for c in answer.citations]


def test_an_abstention_and_a_bad_question_say_so(seen):
    assert seen["abstained"].structured_content["abstained"]
    assert seen["abstained"].structured_content["citations"] == []
    assert seen["empty"].is_error
    assert "the question is empty" in seen["empty"].content[0].text
    assert "Traceback" not in seen["empty"].content[0].text


def test_search_returns_ranked_chunks_without_an_answer(seen):
    hits = seen["found"].structured_content["hits"]
    assert hits and [h["rank"] for h in hits] == list(range(1, len(hits) + 1))
    assert all({"chunk_id", "score", "title", "source", "content"} <= set(h) for h in hits)


def test_verify_passes_a_fresh_answer(seen):
    report = seen["verified"].structured_content
    assert report["ok"] and report["failed"] == 0 and report["citations"] > 0


def test_a_chunk_resource_holds_its_text_offsets_and_metadata(seen):
    import json

    body = json.loads(seen["chunk"].contents[0].text)
    assert body["chunk_id"] == seen["answered"].structured_content["citations"][0]["chunk_id"]
    assert {"content", "start", "end", "title", "source", "snapshot_id"} <= set(body)


def test_the_key_decides_the_tenant_over_both_transports(seen):
    private = seen["private"].structured_content
    assert "ORCHID-7731" in private["answer"]
    assert all(leaked(str(seen[k].structured_content), "globex") == []
               for k in ("answered", "private", "found"))


def test_a_tampered_answer_fails_verification_over_mcp(doors_url):
    async def go():
        async with http_client(doors_url, ACME_KEY) as client:
            answer = (await client.call_tool("answer", {"question": ANSWERED})).structured_content
            answer["citations"][0]["quote"] = "You can return items within 365 days"
            moved = dict(answer, citations=[dict(c) for c in answer["citations"]])
            moved["citations"][0]["url"] = moved["citations"][0]["url"].replace(
                "start=", "start=1")
            return [(await client.call_tool("verify", {"receipt": r})).structured_content
                    for r in (answer, moved)]

    quote, link = run(go())
    assert not quote["ok"] and quote["failed"] == 1
    assert not link["ok"] and any("link" in p for p in link["answer_problems"])


def test_mcp_over_http_refuses_a_bad_key_with_a_json_401(doors_url):
    response = httpx.post(f"{doors_url}/mcp", json={}, headers={
        "Authorization": "Bearer not-a-key-0123456789"})
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"


def test_citadel_mcp_refuses_an_unknown_key_at_start(doors_engine):
    import subprocess

    env = {**os.environ, **doors_env(doors_engine.settings.home),
           "CITADEL_MCP_API_KEY": "not-a-key-0123456789"}
    done = subprocess.run([sys.executable, "-m", "citadel", "mcp"], env=env,
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode != 0
    assert "unknown API key" in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == ""  # stdout is the protocol's


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_another_tenants_chunk_is_a_protocol_error_never_its_text(doors_engine, doors_url,
                                                                   transport):
    foreign = [c.chunk_id for c in doors_engine.index.chunks_of("acme")]
    assert foreign

    async def go():
        client = (http_client(doors_url, GLOBEX_KEY) if transport == "http"
                  else stdio_client(doors_engine.settings.home, GLOBEX_KEY))
        async with client:
            errors = []
            for chunk_id in (*foreign, "no-such-chunk#1"):
                try:
                    await client.read_resource(chunk_uri(chunk_id))
                except MCPError as exc:
                    errors.append(str(exc))
            return errors

    errors = run(go())
    assert len(errors) == len(foreign) + 1
    assert all("no chunk" in e and "ORCHID" not in e for e in errors)


def test_answer_takes_the_conversation_so_far(seen):
    followed = seen["followed"].structured_content
    assert followed["standalone"]["question"] == \
        "How long do premium members have to return an item?"
    assert "90 days" in followed["answer"] and followed["citations"]
    assert leaked(seen["followed"].content[0].text, "globex") == []
    assert seen["followed"].content[0].text.startswith(
        "Answering: How long do premium members have to return an item?")
    assert seen["too_long"].is_error and "8" in seen["too_long"].content[0].text
