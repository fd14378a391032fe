"""`POST /v1/agent` as `create_app` serves it: authentication, business facts apart from the
cited policy, customer isolation, the app's error format, and a missing business database."""

import json
import logging
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from citadel.agent.db import SqliteBusinessDB
from citadel.agent.demo_data import seed_demo_data
from citadel.config import Settings
from citadel.server import create_app
from tests.helpers_agent import ALICE_KEY, BOB_KEY, with_demo_business

ALICE = {"Authorization": f"Bearer {ALICE_KEY}"}
REFUND_1042 = {"question": "Can I get a refund for order 1042?"}


@pytest.fixture(scope="module")
def client(hashing_engine, tmp_path_factory):
    engine = with_demo_business(hashing_engine,
                                tmp_path_factory.mktemp("agent") / "business.sqlite")
    with TestClient(create_app(engine), base_url="http://localhost") as c:
        yield c


@pytest.mark.parametrize("headers", [
    {}, {"Authorization": "Bearer cit_not_a_real_key_000000"}, {"X-API-Key": "nope"},
    {"Authorization": f"Basic {ALICE_KEY}"},
])
def test_agent_without_a_valid_key_is_401_in_the_apps_error_format(client, headers):
    for body in (REFUND_1042, {"order_id": "nope"}):
        r = client.post("/v1/agent", json=body, headers={**headers, "X-Request-ID": "no-key"})
        assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
        assert r.headers["x-client-request-id"] == "no-key"
        assert r.json() == {"error": {"code": "unauthorized",
                                      "request_id": r.headers["x-request-id"],
                                      "message": "missing or invalid API key", "errors": []}}


@pytest.mark.parametrize("headers", [ALICE, {"X-API-Key": BOB_KEY}])
def test_agent_with_a_demo_key_answers_that_customer(client, headers):
    r = client.post("/v1/agent", json={"question": "What are my orders?"},
                    headers={**headers, "X-Request-ID": "agent-1"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["request_id"] == r.headers["x-request-id"]
    assert r.headers["x-client-request-id"] == "agent-1"
    assert body["customer_id"] == ("cust_alice" if headers is ALICE else "cust_bob")
    [fact] = body["business"]
    assert fact["call"] == {"name": "list_orders", "arguments": {}} and fact["authoritative"]


def test_refund_question_keeps_business_facts_apart_from_policy_citations(client):
    body = client.post("/v1/agent", json=REFUND_1042, headers=ALICE).json()
    [fact] = body["business"]
    assert fact["call"] == {"name": "check_refund_eligibility", "arguments": {"order_id": 1042}}
    assert fact["source"] == "order system" and fact["authoritative"] is True
    assert fact["data"]["eligibility"]["eligible"] is True
    assert "citations" not in fact and "[" not in fact["summary"]
    # The policy: a gated answer whose citations resolve through the app's source endpoints.
    answer = body["answer"]
    assert answer["grounded"] and answer["citations"]
    assert "1042" not in answer["answer"]
    for citation in answer["citations"]:
        chunk = client.get(f"/v1/chunks/{quote(citation['chunk_id'], safe='')}").json()
        assert citation["quote"] in chunk["content"]
        assert chunk["snapshot_id"] == citation["snapshot_id"]
    assert answer["trace"]["request_id"] == body["request_id"]


def test_agent_requests_get_one_log_line_with_customer_and_citations(client, caplog):
    caplog.set_level(logging.INFO, logger="citadel.http")
    client.post("/v1/agent", json=REFUND_1042, headers={**ALICE, "X-Request-ID": "agent-log"})
    [line] = [json.loads(r.getMessage()) for r in caplog.records
              if r.name == "citadel.http" and '"client_request_id": "agent-log"' in r.getMessage()]
    assert line["status"] == 200 and line["customer_id"] == "cust_alice"
    assert line["intent"] == "refund_eligibility" and line["citations_emitted"] >= 1
    assert line["snapshot_id"].startswith("kb-")


def test_another_customers_order_is_not_found(client):
    for body in ({"question": "Where is order 2001?"},
                 {"question": "Where is my order?", "order_id": 2001}):
        r = client.post("/v1/agent", json=body, headers=ALICE)
        assert r.status_code == 200
        assert [f["outcome"] for f in r.json()["business"]] == ["not_found"]
        assert "Bob" not in r.text and "DN-JKT" not in r.text and "240.00" not in r.text


@pytest.mark.parametrize("body", [{"question": " "}, {"question": "Where?", "order_id": "1"},
                                  {"question": "Where?", "customer_id": "cust_bob"}])
def test_bad_agent_input_is_a_422_in_the_apps_error_format(client, body):
    r = client.post("/v1/agent", json=body, headers=ALICE)
    assert r.status_code == 422 and r.json()["error"]["message"]


def test_agent_is_in_the_openapi_schema_with_its_auth_and_error_bodies(client):
    schema = client.get("/openapi.json").json()
    post = schema["paths"]["/v1/agent"]["post"]
    assert post["security"] == [{"HTTPBearer": []}, {"APIKeyHeader": []}]
    for status in ("401", "422", "503"):
        ref = post["responses"][status]["content"]["application/json"]["schema"]["$ref"]
        assert ref == "#/components/schemas/ErrorBody"


def test_without_a_business_database_the_agent_is_503_and_the_rest_works(
        hashing_engine, tmp_path):
    path = tmp_path / "business.sqlite"
    settings = hashing_engine.settings.model_copy(update={"business_dsn": f"sqlite:///{path}"})
    engine = type(hashing_engine)(settings, hashing_engine.index, hashing_engine.embedder,
                                  hashing_engine.generator)
    with TestClient(create_app(engine), base_url="http://localhost") as client:
        r = client.post("/v1/agent", json=REFUND_1042, headers=ALICE)
        assert r.status_code == 503
        error = r.json()["error"]
        assert error["code"] == "not_ready" and "citadel demo-data" in error["message"]
        assert not path.exists()  # not created empty behind the operator's back
        assert client.post("/v1/answer", json=REFUND_1042).status_code == 200
        assert client.get("/readyz").status_code == 200

        # Seeded while the server runs: served from the next request on, no restart.
        db = SqliteBusinessDB(path)
        seed_demo_data(db)
        db.close()
        r = client.post("/v1/agent", json=REFUND_1042, headers=ALICE)
        assert r.status_code == 200 and r.json()["business"][0]["outcome"] == "ok"


def test_without_a_knowledge_base_business_facts_are_still_served(tmp_path):
    path = tmp_path / "business.sqlite"
    db = SqliteBusinessDB(path)
    seed_demo_data(db)
    db.close()
    settings = Settings(home=tmp_path / "empty-home", embedder="hashing",
                        business_dsn=f"sqlite:///{path}")
    with TestClient(create_app(settings), base_url="http://localhost") as client:
        assert client.get("/readyz").status_code == 503
        body = client.post("/v1/agent", json=REFUND_1042, headers=ALICE).json()
        assert body["business"][0]["data"]["eligibility"]["eligible"] is True
        assert body["answer"] is None and body["degraded"]
        assert any(r.startswith("knowledge base:") for r in body["degraded_reasons"])
