"""Document management over HTTP: admin keys list, upload and remove documents, each change a
new validated snapshot that the server answers from at once; answering keys are refused, bad
uploads are 4xx JSON errors, and an upload for a tenant stays that tenant's."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from citadel.config import Settings
from citadel.ingest.pipeline import ingest
from citadel.knowledge.build_lock import change_lock
from citadel.knowledge.snapshots import Catalog
from citadel.retrieval.embedders.hashing import HashingEmbedder
from citadel.server import create_app
from tests.helpers_kb import write_kb

ADMIN_KEY = "admin-key-0123456789abcdef"
ACME_KEY = "acme-key-0123456789abcdef"
GLOBEX_KEY = "globex-key-0123456789abcdef"
ADMIN = {"Authorization": f"Bearer {ADMIN_KEY}"}
ACME = {"Authorization": f"Bearer {ACME_KEY}"}
GLOBEX = {"Authorization": f"Bearer {GLOBEX_KEY}"}

KB = {
    "returns.md": "# Returns\n\nYou have 30 days to return an item for a refund.\n",
    "shipping.md": "# Shipping\n\nStandard delivery takes 3 to 5 working days.\n",
}
GROOMING = (b"# Llama grooming\n\nThe llama grooming service costs 45 pounds per visit. "
            b"Grooming takes about two hours.\n")
QUESTION = "How much does the llama grooming service cost?"


def settings_for(home: Path, **overrides) -> Settings:
    return Settings(home=home, embedder="hashing", admin_keys=(ADMIN_KEY,),
                    api_keys={ACME_KEY: "acme", GLOBEX_KEY: "globex"}, **overrides)


@pytest.fixture
def served(tmp_path):
    """A server over a two-document knowledge base ingested from a folder."""

    def serve(**overrides) -> tuple[TestClient, Settings]:
        settings = settings_for(tmp_path / "home", **overrides)
        ingest([write_kb(tmp_path / "kb", KB)], settings, embedder=HashingEmbedder(),
               progress=False)
        return TestClient(create_app(settings), base_url="http://localhost"), settings

    return serve


def upload(client: TestClient, *files: tuple[str, bytes], headers=ADMIN, **form):
    return client.post("/v1/documents", headers=headers, data=form,
                       files=[("files", (name, data, "application/octet-stream"))
                              for name, data in files])


def cited(client: TestClient, headers=None) -> set[str]:
    body = client.post("/v1/answer", json={"question": QUESTION}, headers=headers or {}).json()
    return {c["document_id"] for c in body["citations"]}


def listed(client: TestClient, **params) -> dict:
    r = client.get("/v1/documents", headers=ADMIN, params=params)
    assert r.status_code == 200, r.text
    return r.json()


def test_upload_list_answer_delete_each_a_new_validated_snapshot(served):
    client, settings = served()
    catalog = Catalog(settings.home)
    with client:
        first = catalog.alias()
        r = upload(client, ("llama-grooming.md", GROOMING))
        assert r.status_code == 201, r.text
        added = r.json()
        assert added["documents"] == ["llama-grooming"] and added["activated"]
        assert added["changes"]["added"] == [{"document_id": "llama-grooming",
                                              "source": "llama-grooming.md"}]
        assert added["changes"]["since"] == first
        assert added["snapshot_id"] != first == added["changes"]["since"]
        assert catalog.get(added["snapshot_id"]).state == "complete"
        assert catalog.alias() == added["snapshot_id"]

        rows = {d["document_id"]: d for d in listed(client)["documents"]}
        assert set(rows) == {"returns", "shipping", "llama-grooming"}
        assert rows["llama-grooming"]["uploaded"] and not rows["returns"]["uploaded"]
        assert rows["llama-grooming"]["chunks"] >= 1 and rows["llama-grooming"]["flagged"] == 0
        # The server answers from the new snapshot at once, citing the upload.
        assert cited(client) == {"llama-grooming"}

        r = client.delete("/v1/documents/llama-grooming", headers=ADMIN)
        assert r.status_code == 200, r.text
        removed = r.json()
        assert removed["changes"]["removed"] == [{"document_id": "llama-grooming",
                                                  "source": "llama-grooming.md"}]
        assert removed["snapshot_id"] != added["snapshot_id"]
        assert catalog.get(removed["snapshot_id"]).state == "complete"
        assert {d["document_id"] for d in listed(client)["documents"]} == {"returns",
                                                                          "shipping"}
        assert "llama-grooming" not in cited(client)
        assert client.get("/v1/documents/llama-grooming").status_code == 404


def test_answering_keys_are_refused_with_a_403_naming_the_admin_key(served):
    client, _ = served()
    with client:
        for response in (client.get("/v1/documents", headers=ACME),
                         upload(client, ("a.md", GROOMING), headers=ACME),
                         client.delete("/v1/documents/returns", headers=ACME)):
            assert response.status_code == 403, response.text
            error = response.json()["error"]
            assert error["code"] == "admin_key_required" and "admin key" in error["message"]
        for headers in ({}, {"Authorization": "Bearer not-a-configured-key-012345"}):
            r = client.get("/v1/documents", headers=headers)
            assert r.status_code == 401 and "admin key" in r.json()["error"]["message"]
        # An admin key answers nothing: it is not an answering key.
        r = client.post("/v1/answer", json={"question": QUESTION}, headers=ADMIN)
        assert r.status_code == 401
        assert {d["document_id"] for d in listed(client)["documents"]} == {"returns",
                                                                          "shipping"}


def test_bad_uploads_are_4xx_json_errors_and_change_nothing(served):
    client, settings = served(max_file_bytes=2_000)
    with client:
        before = Catalog(settings.home).alias()
        cases = [
            (upload(client, ("big.md", b"# Big\n\n" + b"word " * 1_000)), 413, "too_large"),
            (upload(client, ("tool.exe", b"MZ\x90\x00")), 415, "unsupported_media_type"),
            (upload(client, ("../../etc/passwd", b"root:x:0:0")), 415,
             "unsupported_media_type"),
            (upload(client, ("empty.md", b"   \n")), 422, "invalid_document"),
            (upload(client, ("a.md", GROOMING), authority="2"), 422, "invalid_request"),
            (upload(client, ("a.md", GROOMING), supersedes="no-such-document"), 422,
             "build_refused"),
            (client.delete("/v1/documents/no-such-document", headers=ADMIN), 404,
             "not_found"),
        ]
        for response, status, code in cases:
            assert response.status_code == status, response.text
            assert response.json()["error"]["code"] == code
        # A body over the upload limit is refused before it is read.
        r = upload(client, ("huge.md", b"x" * (2_000 + (1 << 20) + 1)))
        assert r.status_code == 413 and r.json()["error"]["code"] == "too_large"
        assert Catalog(settings.home).alias() == before
        assert {d["document_id"] for d in listed(client)["documents"]} == {"returns",
                                                                          "shipping"}


def test_a_file_name_is_never_a_path(served, tmp_path):
    client, settings = served()
    with client:
        r = upload(client, ("../../etc/passwd.txt", b"Passwords are reset every 90 days.\n"))
        assert r.status_code == 201, r.text
        assert r.json()["documents"] == ["passwd"]
        row = next(d for d in listed(client)["documents"] if d["document_id"] == "passwd")
        assert row["source"] == "passwd.txt"
    # Stored under the hash of its bytes, inside the home; nothing written where it pointed.
    assert [len(p.stem) for p in (settings.home / "documents").iterdir()] == [64]
    assert not (tmp_path / "etc").exists() and not (settings.home / "etc").exists()


def test_an_upload_for_a_tenant_is_retrieved_by_that_tenants_keys_only(served):
    client, _ = served()
    with client:
        r = upload(client, ("llama-grooming.md", GROOMING), tenant="acme", authority="0.9")
        assert r.status_code == 201, r.text
        assert cited(client, ACME) == {"llama-grooming"}
        assert "llama-grooming" not in cited(client, GLOBEX)
        assert "llama-grooming" not in cited(client)
        assert client.get("/v1/documents/llama-grooming", headers=GLOBEX).status_code == 404
        assert client.get("/v1/documents/llama-grooming", headers=ACME).status_code == 200
        rows = listed(client, tenant="acme")["documents"]
        assert [(d["document_id"], d["tenant"], d["authority"]) for d in rows] == [
            ("llama-grooming", "acme", 0.9)]
        assert {d["document_id"] for d in listed(client, tenant="")["documents"]} == {
            "returns", "shipping"}


def test_an_upload_with_an_existing_id_replaces_that_document(served):
    client, _ = served()
    with client:
        r = upload(client, ("returns.md", b"# Returns\n\nYou have 60 days to return an item.\n"))
        assert r.status_code == 201, r.text
        changes = r.json()["changes"]
        assert [d["document_id"] for d in changes["changed"]] == ["returns"]
        assert changes["added"] == changes["removed"] == []
        text = client.get("/v1/documents/returns").json()["text"]
        assert "60 days" in text and "30 days" not in text


def test_a_change_while_another_holds_the_lock_is_a_409(served):
    client, settings = served()
    with client, change_lock(settings.home):
        r = upload(client, ("llama-grooming.md", GROOMING))
        assert r.status_code == 409, r.text
        assert r.json()["error"]["code"] == "change_in_progress"
        r = client.delete("/v1/documents/returns", headers=ADMIN)
        assert r.status_code == 409


def test_the_list_is_paged(served):
    client, _ = served()
    with client:
        page = listed(client, limit=1)
        assert page["total"] == 2 and page["next_offset"] == 1
        assert [d["document_id"] for d in page["documents"]] == ["returns"]
        page = listed(client, limit=1, offset=1)
        assert page["next_offset"] is None
        assert [d["document_id"] for d in page["documents"]] == ["shipping"]
        assert client.get("/v1/documents", headers=ADMIN,
                          params={"limit": 0}).status_code == 422
