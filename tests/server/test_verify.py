"""`POST /v1/verify` and MCP's `verify` (`Operations.verify`): a caller's answer is compared
only with its own tenant's requests, a door's links are signed and must lead to this server,
and a signed field deleted from the answer fails."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from citadel.engine import Engine
from citadel.knowledge.signing import KeyStore
from citadel.retrieval.embedders.hashing import HashingEmbedder
from citadel.server import create_app
from tests.doors import ACME_KEY, ANSWERED, GLOBEX_KEY, PRIVATE, build_doors_kb
from tests.helpers_receipts import format_1_door_answer, with_link

MADE_UP = "made-up-request-0123456789"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    settings = build_doors_kb(tmp_path_factory.mktemp("verify"))
    engine = Engine.open(settings, embedder=HashingEmbedder())
    with TestClient(create_app(engine)) as client:
        yield client, engine
    engine.close()


def key(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


def verify(client: TestClient, answer: dict, api_key: str | None = None) -> dict:
    response = client.post("/v1/verify", json=answer, headers=key(api_key))
    assert response.status_code == 200, response.text
    return response.json()


def ask(client: TestClient, door: str, api_key: str | None) -> str:
    """Ask PRIVATE through a door; the server's request id."""
    if door == "chat":
        response = client.post("/v1/chat/completions", headers=key(api_key), json={
            "model": "citadel", "messages": [{"role": "user", "content": PRIVATE}]})
    else:
        response = client.post(door, json={"question": PRIVATE}, headers=key(api_key))
    assert response.status_code == 200, response.text
    return response.headers["x-request-id"]


# --- another tenant's requests ---------------------------------------------------------------


@pytest.mark.parametrize("door", ["/v1/answer", "/v1/answer/stream", "chat"])
@pytest.mark.parametrize("caller", [None, GLOBEX_KEY])
def test_another_tenants_request_id_is_as_unknown_as_a_made_up_one(served, door, caller):
    client, _ = served
    acme = client.post("/v1/answer", json={"question": PRIVATE}, headers=key(ACME_KEY)).json()
    request_id = ask(client, door, ACME_KEY)
    # The attack: given acme's request id, guess its answer text and its citation (unsigned,
    # so only the request log can confirm them) and see whether verify says they match.
    right = {"answer": acme["answer"], "citations": acme["citations"]}
    wrong = {"answer": acme["answer"].replace("ORCHID-7731", "ORCHID-0000"),
             "citations": [{**acme["citations"][0], "document_id": "acme-x", "source": "x.md",
                            "section": "Guess"}]}

    def report(guess: dict, rid: str) -> str:
        body = verify(client, {**guess, "trace": {"request_id": rid}}, caller)
        return json.dumps(body).replace(rid, "RID")

    for guess in (right, wrong):
        assert report(guess, request_id) == report(guess, MADE_UP)
    assert "no record of request RID in the request log" in report(right, request_id)


@pytest.mark.parametrize("door", ["/v1/answer", "/v1/answer/stream", "chat"])
def test_a_tenant_checks_its_own_requests_against_the_log(served, door):
    client, _ = served
    acme = client.post("/v1/answer", json={"question": PRIVATE}, headers=key(ACME_KEY)).json()
    request_id = ask(client, door, ACME_KEY)
    unsigned = {"answer": acme["answer"], "citations": acme["citations"],
                "trace": {"request_id": request_id}}
    assert verify(client, unsigned, ACME_KEY)["ok"]
    edited = {**unsigned, "answer": acme["answer"].replace("ORCHID", "LOTUS")}
    assert ("the answer text differs from what the engine answered for request "
            f"{request_id}") in verify(client, edited, ACME_KEY)["answer_problems"]


def test_the_mcp_verify_tool_compares_only_with_the_callers_tenant(served):
    client, _ = served
    operations = client.app.state.operations  # what MCP's `answer` and `verify` tools call
    acme = operations.answer(PRIVATE, tenant="acme")
    unsigned = {"answer": acme.answer, "request_id": acme.trace.request_id,
                "citations": [c.model_dump(mode="json") for c in acme.citations]}
    page = "http://127.0.0.1:8000"
    assert operations.verify(unsigned, tenant="acme", page=page).ok
    for caller in (None, "globex"):
        known = operations.verify(unsigned, tenant=caller, page=page)
        unknown = operations.verify({**unsigned, "request_id": MADE_UP}, tenant=caller,
                                    page=page)
        assert (known.model_dump_json().replace(acme.trace.request_id, "RID")
                == unknown.model_dump_json().replace(MADE_UP, "RID"))


# --- links and deleted fields ----------------------------------------------------------------


def chat_record(client: TestClient) -> dict:
    """The chat door's `citadel` record: a gated answer with links, as MCP's `answer`."""
    response = client.post("/v1/chat/completions", json={
        "model": "citadel", "messages": [{"role": "user", "content": ANSWERED}]})
    return response.json()["citadel"]


def test_a_doors_links_are_signed_and_must_lead_to_this_server(served):
    client, _ = served
    record = chat_record(client)
    signed = json.loads(record["receipt"]["payload"])
    assert signed["citations"][0]["url"] == record["citations"][0]["url"]
    assert signed["format"] == "citadel-receipt-2"
    assert verify(client, record)["ok"]
    for base, problem in (
            ("javascript:alert(1)//", "the link of citation {label} is not an http(s) address"),
            ("https://evil.example/", "the link of citation {label} leads to "
                                      "https://evil.example:443, not to the server")):
        report = verify(client, with_link(record, base))
        problems = report["answer_problems"]
        assert not report["ok"]
        assert "citations[0].url differs from the signed receipt" in problems
        label = record["citations"][0]["label"]
        assert any(p.startswith(problem.format(label=label)) for p in problems), problems


def test_an_old_doors_unsigned_links_are_still_checked(served):
    client, engine = served
    old = format_1_door_answer(engine.answer(ANSWERED), KeyStore(engine.settings.home),
                               "http://testserver")
    report = verify(client, old)
    assert report["ok"], report["answer_problems"]
    assert any("links were not signed" in n for n in report["signature"]["notes"])
    for base in ("javascript:alert(1)//", "https://evil.example/"):
        report = verify(client, with_link(old, base))
        assert not report["ok"]
        assert any(p.startswith(f"the link of citation {old['citations'][0]['label']} ")
                   for p in report["answer_problems"])


def test_an_answer_without_its_signed_conflict_fails(served):
    client, _ = served
    answer = client.post("/v1/answer", json={"question": ANSWERED}).json()
    assert answer["conflict"] is not None and verify(client, answer)["ok"]
    stripped = {k: v for k, v in answer.items()
                if k not in ("conflict", "span", "sources_consulted")}
    report = verify(client, stripped)
    assert not report["ok"]
    assert report["signature"]["absent"] == ["conflict", "sources_consulted", "span"]
    assert "conflict was signed but is missing from the answer" in report["answer_problems"]
