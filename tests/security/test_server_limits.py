"""The HTTP server under hostile or careless clients: idle and slow sockets, clients that
leave, requests with a forged Host, sloppy JSON types; and what error bodies give away."""

import re

import pytest
from fastapi.testclient import TestClient

from citadel.config import Settings
from citadel.server import create_app
from tests.conftest import hashing_settings

ABSOLUTE_PATH = re.compile(r"(?<![\w:/.])/(?:root|home|tmp|srv|var|usr)\b")


@pytest.fixture(scope="module")
def client(hashing_engine):
    with TestClient(create_app(hashing_engine), base_url="http://localhost") as c:
        yield c


# --- 5. strict numbers and booleans -------------------------------------------------------


@pytest.mark.parametrize("top_k", [True, False, "3", 3.5])
def test_top_k_must_be_a_json_integer_not_a_boolean_or_string(client, top_k):
    r = client.post("/v1/answer", json={"question": "How long are gift cards valid?",
                                        "top_k": top_k})
    assert r.status_code == 422
    error = r.json()["error"]
    assert error["code"] == "invalid_request" and "top_k" in error["message"]
    assert "integer" in error["message"]


@pytest.mark.parametrize("top_k", [3, 3.0])
def test_top_k_as_an_integer_is_still_accepted(client, top_k):
    # 3.0 is an integer in JSON Schema, which the OpenAPI document promises.
    r = client.post("/v1/answer", json={"question": "How long are gift cards valid?",
                                        "top_k": top_k})
    assert r.status_code == 200


# --- 3. 503 bodies say what to do, not where the files are --------------------------------


def test_not_ready_bodies_say_run_ingest_without_the_servers_paths(tmp_path):
    home = tmp_path / "empty-home"
    with TestClient(create_app(Settings(home=home, embedder="hashing")),
                    base_url="http://localhost") as c:
        answer = c.post("/v1/answer", json={"question": "anything?"})
        ready = c.get("/readyz")
    assert answer.status_code == 503 and ready.status_code == 503
    for text in (answer.json()["error"]["message"], ready.json()["reason"]):
        assert "citadel ingest" in text
        assert str(tmp_path) not in text and not ABSOLUTE_PATH.search(text), text


def test_a_mismatched_snapshot_is_explained_without_paths(hashing_engine):
    # The demo snapshot was built with the hashing embedder; this config runs MiniLM.
    settings = Settings(home=hashing_engine.settings.home, embedder="minilm")
    with TestClient(create_app(settings), base_url="http://localhost") as c:
        answer = c.post("/v1/answer", json={"question": "anything?"})
        ready = c.get("/readyz")
    assert answer.status_code == 503 and ready.status_code == 503
    for text in (answer.json()["error"]["message"], ready.json()["reason"]):
        assert "does not match the running configuration" in text
        assert str(hashing_engine.settings.home) not in text and not ABSOLUTE_PATH.search(text)


# --- 4. Host allow-list (DNS rebinding) and browser hardening headers -------------------


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8000", "127.0.0.1.evil.example",
                                  "localhost.evil.example", ""])
def test_a_foreign_host_header_is_refused_with_400_json(client, host):
    r = client.get("/healthz", headers={"host": host})
    assert r.status_code == 400
    assert r.headers["content-type"] == "application/json"
    assert r.json()["error"]["code"] == "bad_host"


@pytest.mark.parametrize("host", ["localhost", "localhost:8000", "127.0.0.1:1234", "[::1]:80",
                                  "LOCALHOST."])
def test_loopback_host_headers_with_any_port_are_served(client, host):
    assert client.get("/healthz", headers={"host": host}).status_code == 200


def test_configured_and_bound_hosts_are_served(hashing_engine, tmp_path):
    settings = hashing_settings(hashing_engine.settings.home,
                                http_allowed_hosts=("kb.example", "api.example:8443"))
    app = create_app(settings, bind_host="citadel.lan")
    with TestClient(app, base_url="http://localhost") as c:
        assert c.get("/healthz", headers={"host": "kb.example:9"}).status_code == 200
        assert c.get("/healthz", headers={"host": "api.example:8443"}).status_code == 200
        assert c.get("/healthz", headers={"host": "api.example:80"}).status_code == 400
        assert c.get("/healthz", headers={"host": "citadel.lan:8000"}).status_code == 200
        assert c.get("/healthz", headers={"host": "evil.example"}).status_code == 400


@pytest.mark.parametrize("path", ["/", "/healthz", "/static/app.js", "/docs", "/nope"])
def test_every_response_carries_the_browser_hardening_headers(client, path):
    r = client.get(path)
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["x-frame-options"] == "DENY"
    assert r.headers["referrer-policy"] == "no-referrer"
    csp = r.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in csp and "'unsafe-inline'" not in csp
    assert "script-src 'self'" in csp


def test_the_refusal_of_a_foreign_host_carries_the_headers_too(client):
    r = client.get("/healthz", headers={"host": "evil.example"})
    assert r.headers["x-frame-options"] == "DENY" and "content-security-policy" in r.headers
