"""Tenant isolation: a private tenant's chunks reach only requests authenticated as that tenant.

The knowledge base has one public document and two private ones (tenants `acme` and `globex`)
that answer the question better than the public one, each with a marker only it contains.
Attacks: asking without a tenant (every backend, the lexical leg, the CLI, the agent), naming a
tenant in the HTTP body or query instead of authenticating, a wrong key, another tenant's key,
and a server that requires keys.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient

from citadel.agent.auth import authenticate_key
from citadel.agent.db import SqliteBusinessDB
from citadel.agent.demo_data import seed_demo_data
from citadel.answering.generators.extractive import ExtractiveGenerator
from citadel.config import ConfigError, Settings
from citadel.engine import Engine
from citadel.ingest.pipeline import ingest
from citadel.retrieval.backends.base import SearchIndex
from citadel.retrieval.embedders.hashing import HashingEmbedder
from citadel.server import create_app
from tests.agent.conftest import ALICE_KEY, TODAY, make_agent
from tests.backend_engines import BACKENDS, backend_settings, build_engine
from tests.helpers_kb import write_kb as write_folder

QUESTION = "How many days do premium members have to return an item?"
MARKERS = {"acme": "ORCHID-7731", "globex": "LOTUS-5512"}
DOCS = {
    "public.md": "# Returns\n\nYou have 30 days to return an item for a refund.\n",
    "acme.md": "# Acme returns\n\nAcme premium members have 90 days to "
               "return an item for a refund. Premium members quote the private code "
               "ORCHID-7731 to return an item.\n",
    "globex.md": "# Globex returns\n\nGlobex premium members have 60 "
                 "days to return an item for a refund. Premium members quote the private code "
                 "LOTUS-5512 to return an item.\n",
}
ACME_KEY = "acme-key-0123456789abcdef"
GLOBEX_KEY = "globex-key-0123456789abcdef"
PUBLIC_KEY = "public-key-0123456789abcdef"
KEYS = {ACME_KEY: "acme", GLOBEX_KEY: "globex", PUBLIC_KEY: ""}


DOC_TENANTS = {"acme.md": "acme", "globex.md": "globex"}


def write_kb(path: Path) -> Path:
    return write_folder(path, DOCS, DOC_TENANTS)


def tenants_in(ranked) -> set[str | None]:
    return {r.chunk.tenant for r in ranked}


def leaked(text: str, *tenants: str) -> list[str]:
    return [t for t in tenants if MARKERS[t] in text or f'"{t}' in text]


# --- every backend ---------------------------------------------------------------------------

@pytest.fixture(scope="module", params=BACKENDS)
def engine(request, tmp_path_factory):
    name = request.param
    dsn = request.getfixturevalue("make_postgres_database")() if name == "postgres" else None
    root = tmp_path_factory.mktemp(f"tenants-{name}")
    built = build_engine(backend_settings(name, root / "home", dsn), [write_kb(root / "kb")])
    yield built
    built.close()


def test_retrieval_without_tenant_never_returns_a_private_chunk(engine):
    for category in (None, "general"):  # a category filter alone must not drop the tenant one
        ranked = engine.retrieve(QUESTION, None, None, category)
        assert tenants_in(ranked) <= {None}, engine.index.backend
    ranked = engine.retrieve(QUESTION, None, None, None)
    assert {r.chunk.document_id for r in ranked} == {"public"}


def test_retrieval_with_a_tenant_returns_its_chunks_and_never_another_tenants(engine):
    for tenant, other in (("acme", "globex"), ("globex", "acme")):
        ranked = engine.retrieve(QUESTION, None, tenant, None)
        assert tenants_in(ranked) == {tenant, None}, engine.index.backend
        assert other not in tenants_in(ranked)


def test_backend_search_without_tenant_is_public_only_even_for_an_exact_match(engine):
    # The private chunk's own text and vector: the best possible match, still not returned.
    private = engine.index.chunks_of("acme")[0]
    vector = engine.embedder.embed_query(private.content)
    hits = engine.index.search(private.content, vector, 10)
    assert hits and tenants_in(hits) <= {None}
    assert private.chunk_id in {h.chunk_id for h in
                                engine.index.search(private.content, vector, 10, tenant="acme")}


def test_answer_without_tenant_never_cites_a_private_tenant(engine):
    answer = engine.answer(QUESTION)
    assert all(c.document_id == "public" for c in answer.citations)
    assert not leaked(answer.model_dump_json(), "acme", "globex")
    events = list(engine.stream(QUESTION))
    assert not leaked("".join(e.model_dump_json() for e in events), "acme", "globex")


def test_the_lexical_leg_alone_never_returns_a_private_chunk(tmp_path):
    # Only the lexical side can match: a zero query vector scores every chunk alike.
    settings = Settings(home=tmp_path / "home", embedder="hashing")
    ingest([write_kb(tmp_path / "kb")], settings, embedder=HashingEmbedder(), progress=False)
    engine = Engine.open(settings.model_copy(update={"dense_weight": 0.0}),
                         embedder=HashingEmbedder())
    try:
        zero = np.zeros(engine.embedder.dimension, dtype=np.float32)
        hits = engine.index.search("ORCHID 7731 LOTUS 5512 premium", zero, 10)
        assert tenants_in(hits) <= {None}
        own = engine.index.search("ORCHID 7731 premium", zero, 10, tenant="acme")
        assert "acme" in tenants_in(own) and "globex" not in tenants_in(own)
    finally:
        engine.close()


def test_a_tenant_named_like_the_lexical_public_marker_stays_private(tmp_path):
    # The lexical index stores "no tenant" as `_public`; a tenant of that name is still private.
    kb = write_folder(tmp_path / "kb", {**DOCS, "sneaky.md": (
        "# Sneaky\n\nPremium members quote the sneaky code TULIP-0042 to return an item.\n")},
        {**DOC_TENANTS, "sneaky.md": "_public"})
    settings = Settings(home=tmp_path / "home", embedder="hashing")
    ingest([kb], settings, embedder=HashingEmbedder(), progress=False)
    engine = Engine.open(settings, embedder=HashingEmbedder())
    try:
        ranked = engine.retrieve("sneaky code TULIP 0042 premium members", None, None, None)
        assert "sneaky" not in {r.chunk.document_id for r in ranked}
    finally:
        engine.close()


class IgnoresTenants(SearchIndex):
    """A broken backend: searches every tenant whatever the request says."""

    backend, strategy = "broken", "ignores-tenants"

    def __init__(self, inner: SearchIndex) -> None:
        self.inner, self.snapshot_id = inner, inner.snapshot_id

    def search(self, text, vector, k, *, tenant=None, category=None):
        found = {}
        for t in ("acme", "globex"):
            for r in self.inner.search(text, vector, k, tenant=t, category=category):
                found.setdefault(r.chunk_id, r)
        return list(found.values())

    def get_chunk(self, chunk_id):
        return self.inner.get_chunk(chunk_id)

    def get_document(self, document_id):
        return self.inner.get_document(document_id)

    def chunks_of(self, document_id):
        return self.inner.chunks_of(document_id)

    def count(self):
        return self.inner.count()


def test_the_engine_drops_private_chunks_a_broken_backend_returns(tmp_path):
    settings = Settings(home=tmp_path / "home", embedder="hashing")
    ingest([write_kb(tmp_path / "kb")], settings, embedder=HashingEmbedder(), progress=False)
    real = Engine.open(settings, embedder=HashingEmbedder())
    try:
        broken = Engine(settings, IgnoresTenants(real.index), HashingEmbedder(),
                        ExtractiveGenerator())
        answer = broken.answer(QUESTION)
        assert answer.trace.retrieved and all(cid.startswith("public")
                                              for cid in answer.trace.retrieved)
        assert not leaked(answer.model_dump_json(), "acme", "globex")
        assert tenants_in(broken.retrieve(QUESTION, None, "acme", None)) == {"acme", None}
    finally:
        real.close()


# --- HTTP ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def http_home(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("tenants-http")
    settings = Settings(home=root / "home", embedder="hashing")
    ingest([write_kb(root / "kb")], settings, embedder=HashingEmbedder(), progress=False)
    return root / "home"


def app_client(home: Path, **settings) -> TestClient:
    engine = Engine.open(Settings(home=home, embedder="hashing", **settings),
                         embedder=HashingEmbedder())
    return TestClient(create_app(engine), base_url="http://localhost")


@pytest.fixture(scope="module")
def client(http_home):
    with app_client(http_home, api_keys=KEYS) as c:
        yield c
        c.app.state.provider.peek().close()


@pytest.fixture(scope="module")
def chunk_ids(http_home) -> dict[str, str]:
    engine = Engine.open(Settings(home=http_home, embedder="hashing"), embedder=HashingEmbedder())
    try:
        return {d: engine.index.chunks_of(d)[0].chunk_id.replace("#", "%23")
                for d in ("public", "acme", "globex")}
    finally:
        engine.close()


ANSWER_PATHS = ["/v1/answer", "/v1/answer/stream"]


@pytest.mark.parametrize("path", ANSWER_PATHS)
def test_answer_without_key_never_cites_a_private_tenant(client, path):
    r = client.post(path, json={"question": QUESTION})
    assert r.status_code == 200, r.text
    assert not leaked(r.text, "acme", "globex")
    if path == "/v1/answer":
        body = r.json()
        assert body["citations"] and {c["document_id"] for c in body["citations"]} == {"public"}
        assert all(cid.startswith("public") for cid in body["trace"]["retrieved"])


@pytest.mark.parametrize("headers", [{}, {"X-API-Key": ACME_KEY}])
@pytest.mark.parametrize("path", ANSWER_PATHS)
def test_a_tenant_in_the_body_is_refused_with_how_to_authenticate(client, path, headers):
    r = client.post(path, json={"question": QUESTION, "tenant": "globex"}, headers=headers)
    assert r.status_code == 422 and r.headers["content-type"].startswith("application/json")
    error = r.json()["error"]
    assert error["code"] == "tenant_not_accepted"
    assert "API key" in error["message"] and "X-API-Key" in error["message"]
    assert not leaked(r.text, "acme", "globex")


@pytest.mark.parametrize("lookup", ["chunk", "document"])
def test_a_tenant_in_the_query_of_a_lookup_is_refused(client, chunk_ids, lookup):
    url = (f"/v1/chunks/{chunk_ids['acme']}" if lookup == "chunk" else "/v1/documents/acme")
    r = client.get(url, params={"tenant": "acme"})
    assert r.status_code == 422 and r.json()["error"]["code"] == "tenant_not_accepted"


@pytest.mark.parametrize("path", ANSWER_PATHS)
def test_key_of_one_tenant_sees_its_own_and_public_documents_never_anothers(client, path):
    for key, tenant, other in ((ACME_KEY, "acme", "globex"), (GLOBEX_KEY, "globex", "acme")):
        for headers in ({"X-API-Key": key}, {"Authorization": f"Bearer {key}"}):
            r = client.post(path, json={"question": QUESTION}, headers=headers)
            assert r.status_code == 200, r.text
            assert MARKERS[tenant] in r.text or f'"{tenant}' in r.text  # its own is served
            assert not leaked(r.text, other)
            if path == "/v1/answer":
                retrieved = r.json()["trace"]["retrieved"]
                assert {cid.split("#")[0] for cid in retrieved} == {tenant, "public"}


def test_lookups_follow_the_key(client, chunk_ids):
    acme = {"Authorization": f"Bearer {ACME_KEY}"}
    for headers, visible in (({}, {"public"}), ({"X-API-Key": PUBLIC_KEY}, {"public"}),
                             (acme, {"public", "acme"}),
                             ({"X-API-Key": GLOBEX_KEY}, {"public", "globex"})):
        for doc in ("public", "acme", "globex"):
            expected = 200 if doc in visible else 404
            chunk = client.get(f"/v1/chunks/{chunk_ids[doc]}", headers=headers)
            document = client.get(f"/v1/documents/{doc}", headers=headers)
            assert (chunk.status_code, document.status_code) == (expected, expected), (
                headers, doc)
            if expected == 404:
                assert not leaked(chunk.text + document.text, doc)


@pytest.mark.parametrize("headers", [
    {"X-API-Key": "wrong-key-0123456789abcdef"}, {"Authorization": "Bearer wrong-key-01234567"},
    {"Authorization": "Bearer "}, {"X-API-Key": ""}, {"X-API-Key": "' OR '1'='1' --"},
    {"X-API-Key": ACME_KEY + "x"}, {"X-API-Key": "sha256:" + "0" * 64},
])
@pytest.mark.parametrize("path", [*ANSWER_PATHS, "/v1/chunks/{public}", "/v1/documents/public"])
def test_a_wrong_key_is_a_401_never_a_fall_back_to_public(client, chunk_ids, path, headers):
    url = path.format(public=chunk_ids["public"])
    r = (client.post(url, json={"question": QUESTION}, headers=headers) if "answer" in path
         else client.get(url, headers=headers))
    assert r.status_code == 401, r.text
    assert r.headers["content-type"].startswith("application/json")
    assert r.headers["www-authenticate"] == "Bearer"
    error = r.json()["error"]
    assert error["code"] == "unauthorized" and "API key" in error["message"]


def test_with_open_answers_off_a_request_without_key_is_a_401(http_home, chunk_ids):
    with app_client(http_home, api_keys=KEYS, open_answers=False) as c:
        try:
            for path in ANSWER_PATHS:
                r = c.post(path, json={"question": QUESTION})
                assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized"
                assert "API key" in r.json()["error"]["message"]
                ok = c.post(path, json={"question": QUESTION}, headers={"X-API-Key": PUBLIC_KEY})
                assert ok.status_code == 200 and not leaked(ok.text, "acme", "globex")
            for url in (f"/v1/chunks/{chunk_ids['public']}", "/v1/documents/public"):
                assert c.get(url).status_code == 401
                assert c.get(url, headers={"X-API-Key": PUBLIC_KEY}).status_code == 200
        finally:
            c.app.state.provider.peek().close()


def test_api_keys_are_never_logged_or_shown(client, caplog):
    with caplog.at_level(logging.DEBUG):
        client.post("/v1/answer", json={"question": QUESTION}, headers={"X-API-Key": ACME_KEY})
        client.post("/v1/answer", json={"question": QUESTION},
                    headers={"X-API-Key": "wrong-key-0123456789abcdef"})
    assert caplog.records and ACME_KEY not in caplog.text
    assert "wrong-key-0123456789abcdef" not in caplog.text
    settings = client.app.state.provider.settings
    assert ACME_KEY not in repr(settings) and ACME_KEY not in str(settings.model_dump())
    assert '"tenant": "acme"' in caplog.text  # what the request log records instead


def test_keys_may_be_configured_by_their_sha256_only(http_home):
    hashed = {"sha256:" + hashlib.sha256(ACME_KEY.encode()).hexdigest(): "acme"}
    with app_client(http_home, api_keys=hashed) as c:
        try:
            ok = c.post("/v1/answer", json={"question": QUESTION}, headers={"X-API-Key": ACME_KEY})
            assert ok.status_code == 200 and MARKERS["acme"] in ok.text
            bad = c.post("/v1/answer", json={"question": QUESTION},
                         headers={"X-API-Key": "sha256:" + hashlib.sha256(
                             ACME_KEY.encode()).hexdigest()})
            assert bad.status_code == 401  # the digest itself is not a key
        finally:
            c.app.state.provider.peek().close()


@pytest.mark.parametrize(("headers", "documents"), [
    ({}, 1),                                           # public only: no key
    ({"X-API-Key": PUBLIC_KEY}, 1),                    # a key for public documents
    ({"X-API-Key": ACME_KEY}, 2),                      # acme's and the public one
    ({"Authorization": f"Bearer {GLOBEX_KEY}"}, 2),    # globex's and the public one
    ({"X-API-Key": "wrong-key-0123456789abcdef"}, 1),  # readiness is no place for a 401
])
def test_readiness_counts_only_the_documents_the_caller_may_see(client, headers, documents):
    r = client.get("/readyz", headers=headers)
    assert r.status_code == 200 and r.json()["ready"] is True
    assert r.json()["documents"] == documents


def test_readiness_without_a_key_answers_when_keys_are_required(http_home):
    with app_client(http_home, api_keys=KEYS, open_answers=False) as c:
        try:
            assert c.get("/readyz").json()["documents"] == 1
            assert c.get("/readyz", headers={"X-API-Key": ACME_KEY}).json()["documents"] == 2
        finally:
            c.app.state.provider.peek().close()


CHAT = "/v1/chat/completions"


@pytest.mark.parametrize("headers", [{}, {"Authorization": f"Bearer {ACME_KEY}"}])
@pytest.mark.parametrize("where", ["body", "citadel options"])
@pytest.mark.parametrize("stream", [False, True])
def test_a_tenant_in_a_chat_request_is_refused_in_openais_shape(client, headers, where,
                                                                stream):
    body = {"model": "citadel", "stream": stream,
            "messages": [{"role": "user", "content": QUESTION}]}
    if where == "body":
        body["tenant"] = "globex"
    else:
        body["citadel"] = {"tenant": "globex"}
    r = client.post(CHAT, json=body, headers=headers)
    assert r.status_code == 400 and r.headers["content-type"].startswith("application/json")
    error = r.json()["error"]
    assert error["code"] == "tenant_not_accepted" and error["type"] == "invalid_request_error"
    assert error["param"] in ("tenant", "citadel.tenant")
    assert "API key" in error["message"] and not leaked(r.text, "acme", "globex")


def mcp_call(client: TestClient, tool: str, arguments: dict, headers: dict) -> dict:
    """One JSON-RPC `tools/call` to the stateless `/mcp` door; the call's result."""
    r = client.post("/mcp", headers={"Accept": "application/json, text/event-stream",
                                     "MCP-Protocol-Version": "2025-06-18", **headers},
                    json={"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                          "params": {"name": tool, "arguments": arguments}})
    assert r.status_code == 200, r.text
    return r.json()["result"]


@pytest.mark.parametrize("headers", [{}, {"Authorization": f"Bearer {ACME_KEY}"}])
@pytest.mark.parametrize(("tool", "arguments"), [("answer", {"question": QUESTION}),
                                                 ("search", {"query": QUESTION})])
def test_a_tenant_argument_to_an_mcp_tool_is_a_tool_error(client, headers, tool, arguments):
    result = mcp_call(client, tool, {**arguments, "tenant": "globex"}, headers)
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert "`tenant` is not accepted" in text and "API key" in text
    assert not leaked(json.dumps(result), "acme", "globex")


def test_a_tenant_in_the_query_of_the_mcp_door_is_refused(client):
    r = client.post("/mcp?tenant=globex", json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                    headers={"Accept": "application/json, text/event-stream"})
    assert r.status_code == 422 and r.json()["error"]["code"] == "tenant_not_accepted"


def test_an_mcp_tool_call_without_a_tenant_still_answers(client):
    result = mcp_call(client, "answer", {"question": QUESTION}, {"X-API-Key": ACME_KEY})
    assert result["isError"] is False and leaked(json.dumps(result), "acme") == ["acme"]


# --- agent and CLI ---------------------------------------------------------------------------

def test_agent_policy_answer_never_cites_a_private_tenant(http_home, tmp_path):
    db = SqliteBusinessDB(tmp_path / "business.sqlite")
    seed_demo_data(db, TODAY)
    engine = Engine.open(Settings(home=http_home, embedder="hashing"), embedder=HashingEmbedder())
    try:
        agent = make_agent(db, engine)
        response = agent.respond(QUESTION, authenticate_key(db, ALICE_KEY))
        assert response.answer is not None and response.answer.trace.retrieved
        assert all(cid.startswith("public") for cid in response.answer.trace.retrieved)
        assert not leaked(response.model_dump_json(), "acme", "globex")
    finally:
        engine.close()
        db.close()


GLOBEX_ONLY = "What private code do Globex premium members quote to return an item?"
CUSTOMER_KEYS = {"acme": "cit_acme_customer_key_0123456789", "globex":
                 "cit_globex_customer_key_0123456789"}


def add_tenant_customers(path: Path) -> None:
    """A customer of each tenant, with an agent API key, in the business database."""
    db = SqliteBusinessDB(path)
    try:
        seed_demo_data(db, TODAY)
        with db.transaction(write=True) as tx:
            for tenant, key in CUSTOMER_KEYS.items():
                tx.execute("INSERT INTO customers (id, name, email, created_at, tenant) "
                           "VALUES (:id, :n, :e, '2026-01-01T00:00:00+00:00', :t)",
                           {"id": f"cust_{tenant}", "n": tenant.title(),
                            "e": f"buyer@{tenant}.example", "t": tenant})
                tx.execute("INSERT INTO api_keys (id, customer_id, key_sha256, label, "
                           "created_at) VALUES (:id, :c, :h, 'test', "
                           "'2026-01-01T00:00:00+00:00')",
                           {"id": f"key_{tenant}", "c": f"cust_{tenant}",
                            "h": hashlib.sha256(key.encode()).hexdigest()})
    finally:
        db.close()


def test_the_agent_answers_a_customer_from_their_tenant_exactly_as_its_key_would(
        http_home, tmp_path):
    """A customer of tenant A asking about a tenant-B-only document gets an abstention; what
    the agent retrieves for a customer is what /v1/answer retrieves with their tenant's key."""
    add_tenant_customers(tmp_path / "business.sqlite")
    with app_client(http_home, api_keys=KEYS,
                    business_dsn=f"sqlite:///{tmp_path / 'business.sqlite'}") as c:
        def agent(tenant: str, question: str) -> dict:
            r = c.post("/v1/agent", json={"question": question},
                       headers={"Authorization": f"Bearer {CUSTOMER_KEYS[tenant]}"})
            assert r.status_code == 200, r.text
            return r.json()

        asked = agent("acme", GLOBEX_ONLY)
        assert asked["answer"]["abstained"] and not asked["answer"]["citations"]
        assert MARKERS["globex"] not in json.dumps(asked)  # (the question names Globex)
        assert "globex" not in {cid.split("#")[0] for cid in asked["answer"]["trace"]["retrieved"]}
        assert MARKERS["globex"] in json.dumps(agent("globex", GLOBEX_ONLY))  # theirs: answered
        for tenant, key, other in (("acme", ACME_KEY, "globex"), ("globex", GLOBEX_KEY, "acme")):
            response = agent(tenant, QUESTION)
            assert response["answer"]["trace"]["question_sha256"] == hashlib.sha256(
                QUESTION.encode()).hexdigest()  # the customer's own question, as policy
            direct = c.post("/v1/answer", json={"question": QUESTION},
                            headers={"X-API-Key": key}).json()
            assert response["answer"]["trace"]["retrieved"] == direct["trace"]["retrieved"]
            assert MARKERS[tenant] in json.dumps(response) and not leaked(json.dumps(response),
                                                                          other)
        c.app.state.provider.peek().close()


def citadel(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "CITADEL_HOME": str(home), "CITADEL_EMBEDDER": "hashing"}
    return subprocess.run([sys.executable, "-m", "citadel", *args], capture_output=True,
                          text=True, env=env, timeout=300)


def test_cli_ask_without_tenant_never_cites_a_private_tenant(http_home):
    out = citadel(http_home, "ask", "--json", QUESTION)
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert all(cid.startswith("public") for cid in answer["trace"]["retrieved"])
    assert not leaked(out.stdout, "acme", "globex")
    # The operator may name a tenant locally: its documents, and still never another's.
    own = citadel(http_home, "ask", "--json", "--tenant", "acme", QUESTION)
    assert own.returncode == 0, own.stderr
    assert MARKERS["acme"] in own.stdout or '"acme' in own.stdout
    assert not leaked(own.stdout, "globex")


def test_the_schema_says_a_key_is_optional_only_in_open_mode(http_home):
    for open_answers in (True, False):
        with app_client(http_home, open_answers=open_answers) as c:
            try:
                paths = c.get("/openapi.json").json()["paths"]
            finally:
                c.app.state.provider.peek().close()
        for path, method in (("/v1/answer", "post"), ("/v1/answer/stream", "post"),
                             ("/v1/chunks/{chunk_id}", "get"),
                             ("/v1/documents/{document_id}", "get")):
            operation = paths[path][method]
            assert ({} in operation["security"]) is open_answers, path
            assert {"HTTPBearer": []} in operation["security"] and "401" in operation["responses"]
            assert "tenant" not in json.dumps(operation.get("parameters", []))
        assert {} not in paths["/v1/agent"]["post"]["security"]
        body = c.app.openapi()["components"]["schemas"]["AnswerRequest"]
        assert "tenant" not in body["properties"]


def test_keys_come_from_an_api_keys_table_and_bad_ones_are_refused_unprinted(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(f'open_answers = false\n\n[api_keys]\n{ACME_KEY} = "acme"\n'
                      f'"sha256:{hashlib.sha256(GLOBEX_KEY.encode()).hexdigest()}" = "globex"\n')
    settings = Settings.load(env={"CITADEL_CONFIG": str(config)})
    assert not settings.open_answers
    assert sorted(settings.api_keys.values()) == ["acme", "globex"]
    from_env = Settings.load(env={"CITADEL_API_KEYS": json.dumps({ACME_KEY: "acme"})})
    assert list(from_env.api_keys.values()) == ["acme"]
    for weak in ("short-key", "has space in it here", "sha256:" + "A" * 64):
        with pytest.raises(ConfigError) as caught:
            Settings.load(env={"CITADEL_API_KEYS": json.dumps({weak: "acme"})})
        assert weak not in str(caught.value) and "key #1" in str(caught.value)
