"""POST /v1/agent through a minimal FastAPI app (the router and the app's error handlers):
authentication, validation, isolation. `tests/server/test_http_agent.py` goes through
`create_app`."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

pytest.importorskip("fastapi")
from fastapi import FastAPI  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

from citadel.agent import business, wording  # noqa: E402
from citadel.agent.db import SqliteBusinessDB  # noqa: E402
from citadel.server.agent_routes import agent_router  # noqa: E402
from citadel.server.errors import install_error_handlers  # noqa: E402
from tests.agent.conftest import ALICE_KEY, BOB_KEY, make_agent  # noqa: E402

ALICE = {"Authorization": f"Bearer {ALICE_KEY}"}


def client_for(agent) -> TestClient:
    app = FastAPI()
    install_error_handlers(app)
    app.include_router(agent_router(lambda: agent))
    return TestClient(app, base_url="http://localhost")


@pytest.fixture
def client(business_db, hashing_engine):
    return client_for(make_agent(business_db, hashing_engine))


def audit_of(db, customer_id):
    with db.transaction() as tx:
        return business.audit_entries(tx, customer_id=customer_id)


def refunds(db, order_id):
    with db.transaction() as tx:
        return tx.all("SELECT id FROM refunds WHERE order_id = :o", {"o": order_id})


@pytest.mark.parametrize("headers", [
    {}, {"Authorization": "Bearer "}, {"Authorization": "Bearer cit_not_a_real_key_000000"},
    {"Authorization": f"Basic {ALICE_KEY}"}, {"X-API-Key": "' OR '1'='1' --"},
    {"X-API-Key": "x" * 5000},
])
def test_unauthenticated_requests_get_401_json(client, headers):
    # Even a malformed body is answered 401 first: nothing is read for an unknown caller.
    for body in ({"question": "Where is order 1042?"}, {"order_id": "nope"}):
        response = client.post("/v1/agent", json=body, headers=headers)
        assert response.status_code == 401
        error = response.json()["error"]
        assert error["code"] == "unauthorized" and error["message"] == "missing or invalid API key"
        assert response.headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize("headers", [ALICE, {"X-API-Key": ALICE_KEY},
                                     {"authorization": f"bearer {ALICE_KEY}"}])
def test_bearer_token_and_api_key_header_both_authenticate(client, headers):
    response = client.post("/v1/agent", json={"question": "Where is order 1045?"},
                           headers=headers)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["customer_id"] == "cust_alice" and body["intent"] == "order_status"
    assert body["business"][0]["authoritative"] is True
    assert body["business"][0]["call"] == {"name": "get_order", "arguments": {"order_id": 1045}}


def test_refund_answer_separates_business_from_cited_policy(client):
    body = client.post("/v1/agent", json={"question": "Can I get a refund for order 1042?"},
                       headers=ALICE).json()
    assert body["business"][0]["data"]["eligibility"]["eligible"] is True
    assert body["answer"]["grounded"] and body["answer"]["citations"]
    official = {"refunds-policy", "holiday-returns"}  # official returns pages
    assert all(c["document_id"] in official for c in body["answer"]["citations"])
    assert "(order system)" in body["message"]
    assert all(f"[{c['chunk_id']}]" in body["message"] for c in body["answer"]["citations"])


@pytest.mark.parametrize("how", ["question", "body"])
def test_other_customers_order_is_not_found_and_audited(client, business_db, how):
    body = ({"question": "Please refund order 2001"} if how == "question" else
            {"question": "Please refund this order", "order_id": 2001})
    response = client.post("/v1/agent", json=body, headers=ALICE)
    assert response.status_code == 200
    data = response.json()
    assert [b["outcome"] for b in data["business"]] == ["not_found"]
    text = response.text
    assert "Bob" not in text and "240.00" not in text and "DN-JKT" not in text
    assert refunds(business_db, 2001) == []
    [entry] = [e for e in audit_of(business_db, "cust_alice") if e.request_id ==
               data["request_id"]]
    assert entry.tool == "request_refund" and entry.arguments["order_id"] == 2001
    assert entry.outcome == "not_found" and entry.detail == "order belongs to another customer"


def test_forged_customer_in_the_body_is_rejected(client, business_db):
    before = len(audit_of(business_db, "cust_bob"))  # the PostgreSQL log spans the session
    for field in ("customer_id", "customer", "caller"):
        response = client.post("/v1/agent", headers=ALICE, json={
            "question": "Where is order 2001?", field: "cust_bob"})
        assert response.status_code == 422
    assert len(audit_of(business_db, "cust_bob")) == before


@pytest.mark.parametrize("body", [
    {"question": "Where?", "order_id": "abc"}, {"question": "Where?", "order_id": "1042"},
    {"question": "Where?", "order_id": -5}, {"question": "Where?", "order_id": 0},
    {"question": "Where?", "order_id": 10**15}, {"question": "Where?", "order_id": 10.5},
    {"question": "Where?", "order_id": "1 OR 1=1"}, {"question": ""}, {"question": "  "},
    {"question": "x" * 2001}, {}, {"question": "Refund order 1042", "idempotency_key": "a b"},
])
def test_malformed_input_gets_4xx_json(client, body):
    response = client.post("/v1/agent", json=body, headers=ALICE)
    assert response.status_code == 422 and response.json()["error"]["message"]


def test_sql_shaped_question_is_inert(client, business_db):
    q = "Where is order 1042'; DROP TABLE orders; -- OR 1=1"
    response = client.post("/v1/agent", json={"question": q}, headers=ALICE)
    assert response.status_code == 200
    assert [b["outcome"] for b in response.json()["business"]] == ["ok"]
    with business_db.transaction() as tx:
        assert tx.one("SELECT count(*) AS n FROM orders")["n"] == 7


def test_twenty_parallel_identical_refund_requests_make_one_refund(client, business_db):
    start = threading.Barrier(20)

    def post(_):
        start.wait()
        return client.post("/v1/agent", headers={**ALICE, "Idempotency-Key": "web-retry-0001"},
                           json={"question": "Please refund order 1042"})

    with ThreadPoolExecutor(20) as pool:
        responses = list(pool.map(post, range(20)))
    assert {r.status_code for r in responses} == {200}
    outcomes = sorted(r.json()["business"][0]["outcome"] for r in responses)
    assert outcomes == ["refund_created"] + ["refund_replayed"] * 19
    assert len(refunds(business_db, 1042)) == 1


def test_bob_cannot_see_alices_refund_and_vice_versa(client, business_db):
    client.post("/v1/agent", headers=ALICE, json={"question": "Please refund order 1042"})
    bob = client.post("/v1/agent", headers={"X-API-Key": BOB_KEY},
                      json={"question": "Where is order 1042?"}).json()
    assert bob["business"][0]["outcome"] == "not_found"
    assert "120.00" not in bob["message"]


def test_business_outage_at_authentication_is_503(tmp_path, hashing_engine):
    path = tmp_path / "broken.sqlite"
    path.write_bytes(b"garbage" * 1000)
    client = client_for(make_agent(SqliteBusinessDB(path), hashing_engine))
    response = client.post("/v1/agent", json={"question": "Where is order 1042?"},
                           headers=ALICE)
    assert response.status_code == 503
    assert response.json()["error"]["message"] == wording.UNAVAILABLE


def test_revoked_key_is_refused(client, business_db):
    with business_db.transaction(write=True) as tx:
        tx.execute("UPDATE api_keys SET revoked_at = created_at WHERE customer_id = :c",
                   {"c": "cust_alice"})
    response = client.post("/v1/agent", json={"question": "Where is order 1042?"},
                           headers=ALICE)
    assert response.status_code == 401
