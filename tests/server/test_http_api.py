import datetime as dt
import hashlib
import json
import logging
import shutil

import pytest
from fastapi.testclient import TestClient

from citadel.agent.db import SqliteBusinessDB
from citadel.agent.demo_data import seed_demo_data
from citadel.config import Settings
from citadel.engine import Engine
from citadel.ingest.loaders import load_corpus
from citadel.ingest.pipeline import ingest
from citadel.knowledge.snapshots import Catalog
from citadel.retrieval.embedders.hashing import HashingEmbedder
from citadel.server import create_app
from tests.conftest import DEMO_KB
from tests.helpers_kb import write_kb

QUESTION = "How long do I have to return an item?"


@pytest.fixture(scope="module")
def client(hashing_engine):
    with TestClient(create_app(hashing_engine), base_url="http://localhost") as c:
        yield c


def test_answer_returns_the_same_schema_as_ask_json(client, hashing_engine):
    r = client.post("/v1/answer", json={"question": QUESTION}, headers={"X-Request-ID": "r-1"})
    assert r.status_code == 200 and r.headers["x-client-request-id"] == "r-1"
    body = r.json()
    assert body["grounded"] and body["citations"]
    assert body["trace"]["request_id"] == r.headers["x-request-id"]
    assert body["trace"]["client_request_id"] == "r-1"
    direct = hashing_engine.answer(QUESTION, request_id=r.headers["x-request-id"])
    assert body["answer"] == direct.answer
    assert body["citations"] == [c.model_dump(mode="json") for c in direct.citations]


def test_answer_passes_top_k_and_filters(client):
    body = client.post("/v1/answer", json={"question": QUESTION, "top_k": 3,
                                           "category": "refunds"}).json()
    assert len(body["trace"]["retrieved"]) <= 3
    assert all(c["document_id"].startswith("refunds") for c in body["citations"])


def test_abstention_says_what_is_missing(client):
    body = client.post("/v1/answer", json={"question": "What is the capital of France?"}).json()
    assert body["abstained"] and not body["citations"]
    assert "capital of France" in body["missing"]
    assert body["sources_consulted"] and body["next_step"]


@pytest.mark.parametrize("payload, status, code", [
    ({"question": ""}, 422, "invalid_question"),
    ({"question": " \n\t "}, 422, "invalid_question"),
    ({"question": "x" * 2001}, 422, "invalid_request"),
    ({"question": 42}, 422, "invalid_request"),
    ({"question": ["a"]}, 422, "invalid_request"),
    ({"question": "ok?", "top_k": 0}, 422, "invalid_request"),
    ({"question": "ok?", "top_k": 101}, 422, "invalid_request"),
    ({"question": "ok?", "top_k": "many"}, 422, "invalid_request"),
    ({"question": "ok?", "temperature": 0.2}, 422, "invalid_request"),
    ({}, 422, "invalid_request"),
    ([], 422, "invalid_request"),
    ("not an object", 422, "invalid_request"),
])
@pytest.mark.parametrize("path", ["/v1/answer", "/v1/answer/stream"])
def test_bad_input_is_a_4xx_json_error(client, path, payload, status, code):
    r = client.post(path, json=payload, headers={"X-Request-ID": "bad-1"})
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/json")
    error = r.json()["error"]
    assert error["code"] == code and error["message"]
    assert error["request_id"] == r.headers["x-request-id"]
    assert r.headers["x-client-request-id"] == "bad-1"


DELIVERY = "How much does UK express delivery cost?"


def test_a_follow_up_is_answered_as_the_question_it_asks(client):
    body = client.post("/v1/answer", json={"question": "And standard delivery?", "history": [
        {"question": DELIVERY, "answer": "UK express delivery costs £9.95. [S1]"}]}).json()
    assert body["standalone"] == {"question": "How much does UK standard delivery cost?",
                                  "original": "And standard delivery?", "how": "rules",
                                  "turns_used": 1}
    assert "£4.95" in body["answer"] and body["citations"]
    assert body["trace"]["standalone"] == body["standalone"]
    alone = client.post("/v1/answer", json={"question": DELIVERY, "history": []}).json()
    assert alone["standalone"] is None and "£9.95" in alone["answer"]


@pytest.mark.parametrize("history, says", [
    ([{"question": DELIVERY}] * 9, "at most 8 items"),
    ([{"question": "x" * 2001}], "at most 2000 characters"),
    ([{"question": DELIVERY, "answer": "x" * 4001}], "at most 4000 characters"),
    ([{"question": ""}], "history.0.question"),
    ([{"question": DELIVERY, "said": "hello"}], "history.0.said"),
    ("How much?", "history: Input should be a valid list"),
])
@pytest.mark.parametrize("path", ["/v1/answer", "/v1/answer/stream"])
def test_a_history_beyond_its_bounds_is_a_422_saying_the_limit(client, path, history, says):
    r = client.post(path, json={"question": "And standard delivery?", "history": history})
    assert r.status_code == 422 and r.headers["content-type"].startswith("application/json")
    error = r.json()["error"]
    assert error["code"] == "invalid_request" and says in error["message"], error["message"]


@pytest.mark.parametrize("raw", [b"{", b'{"question": "a"', b"\xff\xfe", b"question=a"])
def test_invalid_json_is_a_400(client, raw):
    r = client.post("/v1/answer", content=raw, headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_json"


def test_oversized_bodies_are_refused_before_parsing(client):
    body = b'{"question": "' + b"a" * 100_000 + b'"}'
    r = client.post("/v1/answer", content=body,
                    headers={"Content-Type": "application/json", "X-Request-ID": "big-1"})
    assert r.status_code == 413 and r.headers["connection"] == "close"
    assert r.json()["error"] == {
        "code": "too_large", "errors": [], "request_id": r.headers["x-request-id"],
        "message": f"the request body declares {len(body)} bytes, over the limit of 64000 "
                   "bytes: send a smaller body"}


def test_an_oversized_body_without_a_declared_length_is_refused_when_it_passes_the_limit(
        client):
    chunks = iter([b'{"question": "', b"a" * 40_000, b"a" * 40_000, b'"}'])
    r = client.post("/v1/answer", content=chunks, headers={"Content-Type": "application/json"})
    assert r.status_code == 413
    assert r.json()["error"]["message"] == ("the request body is over the limit of 64000 "
                                            "bytes: send a smaller body")


def test_question_limit_comes_from_the_configuration(hashing_engine, tmp_path):
    engine = Engine(hashing_engine.settings.model_copy(update={"max_question_chars": 20}),
                    hashing_engine.index, hashing_engine.embedder, hashing_engine.generator)
    with TestClient(create_app(engine), base_url="http://localhost") as c:
        schema = c.get("/openapi.json").json()["components"]["schemas"]["AnswerRequest"]
        assert schema["properties"]["question"]["maxLength"] == 20
        assert c.post("/v1/answer", json={"question": "x" * 21}).status_code == 422
        assert c.post("/v1/answer", json={"question": "x" * 20}).status_code == 200


def test_chunk_lookup_has_source_offsets_and_window(client, hashing_engine):
    r = client.get("/v1/chunks/refunds-policy%232", params={"window": 40})
    assert r.status_code == 200
    chunk = r.json()
    doc = hashing_engine.index.get_document("refunds-policy")
    assert doc.text[chunk["start"]:chunk["end"]] == chunk["content"]
    window = chunk["window"]
    assert doc.text[window["start"]:window["end"]] == window["text"]
    assert window["start"] == chunk["start"] - 40 and window["end"] == chunk["end"] + 40
    assert chunk["snapshot_id"] == hashing_engine.index.snapshot_id
    assert chunk["title"] and chunk["section"] and chunk["source"] == "refunds-policy.md"


@pytest.mark.parametrize("path", ["/v1/chunks/nope", "/v1/chunks/refunds-policy%23999",
                                  "/v1/documents/nope", "/v1/chunks/a/b/c", "/v1/nothing"])
def test_unknown_ids_are_404_json(client, path):
    r = client.get(path)
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize("query", ["window=-1", "window=abc", "window=20001"])
def test_bad_query_parameters_are_422_json(client, query):
    r = client.get(f"/v1/chunks/refunds-policy%232?{query}")
    assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_request"


def test_wrong_method_is_405_json(client):
    r = client.get("/v1/answer")
    assert r.status_code == 405 and r.json()["error"]["code"] == "method_not_allowed"


def test_document_lists_its_chunks_offsets(client, hashing_engine):
    doc = client.get("/v1/documents/refunds-policy").json()
    chunks = hashing_engine.index.chunks_of("refunds-policy")
    assert [c["chunk_id"] for c in doc["chunks"]] == [c.chunk_id for c in chunks]
    for span, chunk in zip(doc["chunks"], chunks, strict=True):
        assert doc["text"][span["start"]:span["end"]] == chunk.content


def test_a_markdown_document_is_its_file_and_a_window_stops_before_its_front_matter(client):
    with open(DEMO_KB / "refunds-policy.md", encoding="utf-8") as f:
        file_text = f.read()
    doc = client.get("/v1/documents/refunds-policy").json()
    assert doc["text"] == file_text
    assert doc["content_sha256"] == hashlib.sha256(file_text.encode()).hexdigest()
    body = doc["body_start"]
    assert file_text[:body].startswith("---\n") and "effective_date" in file_text[:body]
    assert file_text[body:].startswith("# Refunds and Returns Policy")
    chunk = client.get("/v1/chunks/refunds-policy%231", params={"window": 1000}).json()
    assert chunk["start"] >= body and chunk["window"]["start"] == body


def test_citation_offsets_point_into_the_document_text(client):
    answer = client.post("/v1/answer", json={"question": QUESTION}).json()
    for c in answer["citations"]:
        doc = client.get(f"/v1/documents/{c['document_id']}").json()
        assert doc["text"][c["start"]:c["end"]] == c["quote"]


def test_health_and_readiness(client, hashing_engine):
    assert client.get("/healthz").json() == {"status": "ok"}
    ready = client.get("/readyz")
    assert ready.status_code == 200 and ready.json()["ready"] is True
    assert ready.json()["snapshot_id"] == hashing_engine.index.snapshot_id


def test_readiness_says_how_many_documents_and_when_the_snapshot_was_built(client,
                                                                           hashing_engine):
    info = Catalog(hashing_engine.settings.home).get(hashing_engine.index.snapshot_id)
    state = client.get("/readyz").json()
    assert state["documents"] == info.documents == len(load_corpus([DEMO_KB]).documents)
    assert dt.datetime.fromisoformat(state["updated_at"]) == dt.datetime.fromisoformat(
        info.completed_at)


def test_without_a_knowledge_base_readiness_is_503_with_reason(tmp_path):
    with TestClient(create_app(Settings(home=tmp_path, embedder="hashing")),
                    base_url="http://localhost") as c:
        assert c.get("/healthz").status_code == 200
        r = c.get("/readyz")
        assert r.status_code == 503 and "citadel ingest" in r.json()["reason"]
        r = c.post("/v1/answer", json={"question": QUESTION})
        assert r.status_code == 503 and r.json()["error"]["code"] == "not_ready"
        # Once something is ingested the same server becomes ready without a restart.
        ingest([DEMO_KB], Settings(home=tmp_path, embedder="hashing"),
               embedder=HashingEmbedder(), progress=False)
        assert c.get("/readyz").status_code == 200
        assert c.post("/v1/answer", json={"question": QUESTION}).json()["grounded"]


def test_about_gives_the_served_snapshots_examples_and_whether_customer_support_is_on(
        tmp_path):
    settings = Settings(home=tmp_path, embedder="hashing")
    with TestClient(create_app(settings), base_url="http://localhost") as c:
        # Nothing ingested, no business database: nothing to offer, and no error.
        assert c.get("/v1/about").json() == {
            "snapshot_id": None, "customer_support": False,
            "examples": {"questions": [], "customer_questions": []}}
        report = ingest([DEMO_KB], settings, embedder=HashingEmbedder(), progress=False)
        about = c.get("/v1/about").json()
        assert about["snapshot_id"] == report.snapshot_id
        assert about["examples"]["questions"][0] == QUESTION
        assert about["customer_support"] is False
        # `citadel demo-data` creates the default business database: no restart needed.
        db = SqliteBusinessDB(tmp_path / "business.sqlite")
        try:
            seed_demo_data(db)
        finally:
            db.close()
        assert c.get("/v1/about").json()["customer_support"] is True


def test_readiness_refuses_an_incompatible_or_replaced_snapshot(tmp_path):
    settings = Settings(home=tmp_path, embedder="hashing")
    ingest([DEMO_KB], settings, embedder=HashingEmbedder(), progress=False)
    engine = Engine.open(settings, embedder=HashingEmbedder())
    try:
        with TestClient(create_app(engine), base_url="http://localhost") as c:
            assert c.get("/readyz").status_code == 200
            # A different embedder than the snapshot was built with.
            engine.embedder = HashingEmbedder(dimension=64)
            r = c.get("/readyz")
            assert r.status_code == 503 and "embedder" in r.json()["reason"]
            engine.embedder = HashingEmbedder()
            # Another snapshot becomes active: this process serves a stale one.
            kb2 = tmp_path / "kb2"
            shutil.copytree(DEMO_KB, kb2)
            (kb2 / "new.md").write_text("# New\n\nA new policy about parcels.\n")
            ingest([kb2], settings, embedder=HashingEmbedder(), progress=False)
            r = c.get("/readyz").json()
            assert r["ready"] is False and r["active_snapshot_id"] != r["snapshot_id"]
            assert Catalog(tmp_path).alias() == r["active_snapshot_id"]
    finally:
        engine.close()


def test_one_structured_log_line_per_request(client, caplog):
    caplog.set_level(logging.INFO, logger="citadel.http")
    client.post("/v1/answer", json={"question": QUESTION}, headers={"X-Request-ID": "log-1"})
    client.post("/v1/answer/stream", json={"question": QUESTION},
                headers={"X-Request-ID": "log-2"})
    client.post("/v1/answer", json={"question": ""}, headers={"X-Request-ID": "log-3"})
    lines = [json.loads(r.getMessage()) for r in caplog.records
             if r.name == "citadel.http" and r.getMessage().startswith("{")]
    by_id = {}
    for line in lines:
        by_id.setdefault(line["client_request_id"], []).append(line)
    assert len({line["request_id"] for line in lines}) == len(lines)
    assert all(len(by_id[i]) == 1 for i in ("log-1", "log-2", "log-3"))
    for rid in ("log-1", "log-2"):
        line = by_id[rid][0]
        assert line["status"] == 200 and line["backend"] == "local"
        assert line["snapshot_id"].startswith("kb-") and line["latency_ms"] > 0
        assert line["citations_emitted"] >= 1 and "citations_dropped" in line
    assert by_id["log-3"][0]["status"] == 422


def test_malformed_client_request_ids_are_not_kept(client):
    r = client.get("/healthz", headers={"X-Request-ID": "bad id with spaces"})
    assert len(r.headers["x-request-id"]) == 32
    assert "x-client-request-id" not in r.headers


def test_the_server_makes_every_request_id_and_keeps_the_clients_beside_it(client, tmp_path):
    """A client that sends one id twice gets two requests with their own ids: neither log
    record shadows the other, and both are found by the client's id."""
    first, second = (client.post("/v1/answer", json={"question": QUESTION},
                                 headers={"X-Request-ID": "same"}) for _ in range(2))
    ids = [r.headers["x-request-id"] for r in (first, second)]
    assert ids[0] != ids[1] and all(len(i) == 32 for i in ids)
    assert [r.headers["x-client-request-id"] for r in (first, second)] == ["same", "same"]
    log = client.app.state.provider.get().request_log
    assert [log.get(i).client_request_id for i in ids] == ["same", "same"]
    assert [r.request_id for r in log.records(client_request_id="same")] == ids


def test_x_client_request_id_is_preferred_to_x_request_id(client):
    r = client.get("/healthz", headers={"X-Request-ID": "proxy-1",
                                        "X-Client-Request-ID": "sdk-1"})
    assert r.headers["x-client-request-id"] == "sdk-1" and r.headers["x-request-id"] != "sdk-1"


def test_openapi_has_real_schemas(client):
    spec = client.get("/openapi.json").json()
    schemas = spec["components"]["schemas"]
    for name in ("AnswerRequest", "Answer", "Citation", "Trace", "ChunkView", "DocumentView",
                 "Readiness", "About", "Examples", "ErrorBody", "MetaEvent", "DeltaEvent",
                 "CitationEvent", "DoneEvent", "ErrorEvent", "StreamEvent"):
        assert name in schemas, name
    assert schemas["AnswerRequest"]["additionalProperties"] is False
    answer = spec["paths"]["/v1/answer"]["post"]
    assert answer["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Answer"}
    assert answer["responses"]["422"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ErrorBody"}
    stream = spec["paths"]["/v1/answer/stream"]["post"]["responses"]["200"]["content"]
    assert "text/event-stream" in stream
    assert client.get("/docs").status_code == 200


def test_tenant_documents_are_hidden_from_other_tenants(tmp_path):
    kb = write_kb(tmp_path / "kb", {
        "public.md": "# Public\n\nDelivery takes three days.\n",
        "acme.md": "# Acme terms\n\nAcme customers get refunds within 60 days.\n",
    }, tenants={"acme.md": "acme"})
    # The tenant comes from the API key (tests/security/test_tenants.py has the attacks).
    keys = {"acme-key-0123456789": "acme", "other-key-0123456789": "other"}
    settings = Settings(home=tmp_path / "home", embedder="hashing", api_keys=keys)
    ingest([kb], settings, embedder=HashingEmbedder(), progress=False)
    engine = Engine.open(settings, embedder=HashingEmbedder())
    try:
        acme = engine.index.chunks_of("acme")
        assert acme and acme[0].tenant == "acme"
        with TestClient(create_app(engine), base_url="http://localhost") as c:
            cid = acme[0].chunk_id.replace("#", "%23")
            as_other = {"X-API-Key": "other-key-0123456789"}
            as_acme = {"Authorization": "Bearer acme-key-0123456789"}
            assert c.get(f"/v1/chunks/{cid}").status_code == 404
            assert c.get(f"/v1/chunks/{cid}", headers=as_other).status_code == 404
            assert c.get(f"/v1/chunks/{cid}", headers=as_acme).status_code == 200
            assert c.get("/v1/documents/acme").status_code == 404
            assert c.get("/v1/documents/acme", headers=as_other).status_code == 404
            assert c.get("/v1/documents/acme", headers=as_acme).status_code == 200
    finally:
        engine.close()


def test_a_pdf_document_returns_its_page_boundaries(documents_engine):
    from tests.documents import GEOTOPO

    with TestClient(create_app(documents_engine), base_url="http://localhost") as c:
        doc = c.get("/v1/documents/geotopo-komprimiert").json()
        assert doc["format"] == "pdf" and doc["source"] == GEOTOPO
        pages = doc["pages"]
        assert [p["number"] for p in pages] == list(range(1, 118))
        assert pages[0]["start"] == 0 and pages[-1]["end"] == len(doc["text"])
        assert all(a["end"] == b["start"] for a, b in zip(pages, pages[1:], strict=False))
        page12 = doc["text"][pages[11]["start"] : pages[11]["end"]]
        assert "französische Eisenbahnmetrik" in page12
        chunk = c.get("/v1/chunks/geotopo-komprimiert%2321").json()
        assert 1 <= chunk["page_start"] <= chunk["page_end"] <= 117
        # A format without pages says so with an empty list.
        word = c.get("/v1/documents/service-levels").json()
        assert word["format"] == "docx" and word["pages"] == []
