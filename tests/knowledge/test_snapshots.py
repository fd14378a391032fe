"""Snapshot identity, manifest and catalog rules."""

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from citadel.config import Settings
from citadel.ingest.loaders import load_corpus
from citadel.ingest.pipeline import ingest
from citadel.knowledge.build_lock import build_lock, is_locked
from citadel.knowledge.readiness import readiness
from citadel.knowledge.snapshots import (
    KNOWLEDGE_SCHEMA_VERSION,
    Catalog,
    Examples,
    Fingerprint,
    SnapshotError,
    SnapshotInfo,
)
from citadel.retrieval.embedders.hashing import HashingEmbedder
from tests.conftest import DEMO_KB


class CountingEmbedder(HashingEmbedder):
    def __init__(self, dimension: int = 256):
        super().__init__(dimension)
        self.texts = 0

    def embed(self, texts):
        self.texts += len(texts)
        return super().embed(texts)


def build(kb: Path, home: Path, embedder=None, **settings):
    return ingest([kb], Settings(home=home, embedder="hashing", **settings),
                  embedder=embedder or HashingEmbedder(), progress=False)


def test_same_corpus_twice_gives_same_id_and_no_rebuild(demo_kb, tmp_path):
    embedder = CountingEmbedder()
    first = build(demo_kb, tmp_path / "home", embedder)
    assert not first.reused and embedder.texts == first.chunks == first.embedded
    second = build(demo_kb, tmp_path / "home", embedder)
    assert second.snapshot_id == first.snapshot_id
    assert second.reused and second.embedded == 0 and embedder.texts == first.chunks
    assert len(Catalog(tmp_path / "home").list()) == 1
    # A different home (no catalog, no cache) computes the same id from the same inputs.
    assert build(demo_kb, tmp_path / "elsewhere").snapshot_id == first.snapshot_id


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


@pytest.fixture(scope="module")
def demo_kb_id(tmp_path_factory) -> str:
    return build(DEMO_KB, tmp_path_factory.mktemp("base")).snapshot_id


@pytest.mark.parametrize(
    "change",
    [
        "document_text",
        "document_metadata",
        "new_document",
        "removed_document",
        "chunk_size",
        "chunk_overlap",
        "embedder_dimension",
        "embedder_model",
        "examples",
    ],
)
def test_changing_any_fingerprint_part_gives_a_new_id(demo_kb, tmp_path, change, demo_kb_id):
    embedder = HashingEmbedder()
    settings = {}
    if change == "document_text":
        _edit(demo_kb / "refunds-policy.md", "30 days", "31 days")
    elif change == "document_metadata":
        _edit(demo_kb / "citadel-sources.toml", '"refunds-policy.md"]\nauthority = 1.0',
              '"refunds-policy.md"]\nauthority = 0.9')
    elif change == "new_document":
        (demo_kb / "extra.md").write_text("# Extra\n\nSomething new.\n")
    elif change == "removed_document":  # with its operator rule (else an ingest error)
        (demo_kb / "sizing-guide.md").unlink()
        _edit(demo_kb / "citadel-sources.toml", '[sources."sizing-guide.md"]\nauthority = 0.7\n',
              "")
    elif change == "chunk_size":
        settings["chunk_size"] = 600
    elif change == "chunk_overlap":
        settings["chunk_overlap"] = 60
    elif change == "embedder_dimension":
        embedder = HashingEmbedder(dimension=128)
    elif change == "embedder_model":
        embedder = type("OtherHashing", (HashingEmbedder,), {"model": "hashing-v2"})()
    elif change == "examples":  # a snapshot is immutable: new page examples, new snapshot
        _edit(demo_kb / "citadel-sources.toml", '    "What is the capital of France?",\n', "")
    changed = build(demo_kb, tmp_path / "changed", embedder, **settings).snapshot_id
    assert changed != demo_kb_id


def test_schema_and_lexical_semantics_are_part_of_the_id(hashing_engine):
    info = Catalog(hashing_engine.settings.home).get(hashing_engine.index.snapshot_id)
    fp = Fingerprint.model_validate(info.fingerprint)
    assert fp.snapshot_id == info.snapshot_id
    variants = {
        "knowledge_schema_version": fp.knowledge_schema_version + 1,
        "dense_schema": {**fp.dense_schema, "dtype": "float16"},
        "sparse_schema": {**fp.sparse_schema, "version": 2},
        "lexical": {**fp.lexical, "k1": 0.9},
        "chunking": {**fp.chunking, "version": "other"},
        "corpus_sha256": "0" * 64,
    }
    ids = {fp.model_copy(update={k: v}).snapshot_id for k, v in variants.items()}
    assert len(ids) == len(variants) and fp.snapshot_id not in ids


def test_the_operators_examples_are_kept_with_the_snapshot_and_a_new_list_reuses_the_cache(
        demo_kb, tmp_path):
    first = build(demo_kb, tmp_path)
    kept = Catalog(tmp_path).get(first.snapshot_id).examples
    assert kept.questions[0] == "How long do I have to return an item?"
    assert kept.customer_questions[0] == "Can I get a refund for order 1042?"
    _edit(demo_kb / "citadel-sources.toml", '"How long are gift cards valid?"',
          '"Can I pay with PayPal?"')
    second = build(demo_kb, tmp_path)
    assert second.snapshot_id != first.snapshot_id and second.embedded == 0
    assert "Can I pay with PayPal?" in Catalog(tmp_path).get(second.snapshot_id).examples.questions


def test_a_snapshot_without_examples_keeps_its_id_and_an_older_one_has_none(hashing_engine):
    info = Catalog(hashing_engine.settings.home).get(hashing_engine.index.snapshot_id)
    fp = Fingerprint.model_validate(info.fingerprint)
    assert fp.examples != Examples() and info.examples == fp.examples
    bare = fp.model_copy(update={"examples": Examples()})
    # The id as it was computed before examples were kept: without the field (and, as then,
    # without an absent ANN index).
    before = {k: v for k, v in bare.model_dump().items()
              if k != "examples" and not (k == "dense_index" and v is None)}
    blob = json.dumps(before, sort_keys=True, separators=(",", ":"))
    assert bare.snapshot_id == "kb-" + hashlib.sha256(blob.encode()).hexdigest()[:16]
    # A catalog row written before has no examples in its fingerprint: none are shown.
    older = {k: v for k, v in info.fingerprint.items() if k != "examples"}
    assert SnapshotInfo.model_validate({**info.model_dump(), "fingerprint": older}).examples \
        == Examples()


def test_manifest_is_readable_json_next_to_the_data(demo_kb, tmp_path):
    report = build(demo_kb, tmp_path)
    n_docs = len(load_corpus([demo_kb]).documents)
    path = tmp_path / "snapshots" / report.snapshot_id / "manifest.json"
    manifest = json.loads(path.read_text())
    assert (path.parent / "chunks.sqlite").is_file()  # next to the data
    assert manifest["snapshot_id"] == report.snapshot_id
    assert Fingerprint.model_validate(manifest["fingerprint"]).snapshot_id == report.snapshot_id
    assert manifest["counts"] == {"documents": n_docs, "chunks": report.chunks,
                                  "dense": report.chunks, "lexical": report.chunks}
    assert manifest["created_at"] and len(manifest["documents"]) == n_docs
    refunds = next(d for d in manifest["documents"] if d["document_id"] == "refunds-policy")
    assert refunds["source"] == "refunds-policy.md" and len(refunds["content_sha256"]) == 64
    fp = manifest["fingerprint"]
    assert fp["chunking"]["size"] == 800 and fp["chunking"]["overlap"] == 120
    assert fp["embedder"] == {"provider": "citadel", "model": "hashing-v1", "dimension": 256}
    assert {"tokenizer", "stemmer", "k1", "b"} <= set(fp["lexical"])
    assert fp["dense_schema"] and fp["sparse_schema"] and fp["knowledge_schema_version"]


def test_complete_snapshot_is_immutable_and_active_one_cannot_be_forgotten(demo_kb, tmp_path):
    report = build(demo_kb, tmp_path)
    catalog = Catalog(tmp_path)
    fp = Fingerprint.model_validate(catalog.get(report.snapshot_id).fingerprint)
    with pytest.raises(SnapshotError, match="immutable"):
        catalog.begin(report.snapshot_id, "local", fp)
    with pytest.raises(SnapshotError, match="active"):
        catalog.forget(report.snapshot_id)
    assert catalog.get(report.snapshot_id).state == "complete"


def test_complete_snapshot_with_missing_data_is_not_silently_repaired(demo_kb, tmp_path):
    report = build(demo_kb, tmp_path)
    shutil.rmtree(tmp_path / "snapshots" / report.snapshot_id)
    with pytest.raises(SnapshotError, match="data is missing"):
        build(demo_kb, tmp_path)


def test_build_lock_is_exclusive_and_released(tmp_path):
    assert not is_locked(tmp_path, "kb-1")
    with build_lock(tmp_path, "kb-1"):
        assert is_locked(tmp_path, "kb-1")
        from citadel.knowledge.build_lock import LockBusy

        with pytest.raises(LockBusy, match="being built by pid"), build_lock(
            tmp_path, "kb-1", wait=False
        ):
            pass
    assert not is_locked(tmp_path, "kb-1")


def test_catalog_survives_concurrent_first_use(tmp_path):
    # Several connections switching a brand-new catalog to WAL at once used to fail with
    # "database is locked" (seen as a rare failure of concurrent ingests).
    import threading

    errors: list[Exception] = []
    for trial in range(40):
        home = tmp_path / f"home{trial}"

        def use(home=home) -> None:
            try:
                Catalog(home).list()
            except Exception as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=use) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == []


def test_a_snapshot_of_an_older_knowledge_schema_is_not_served_and_says_to_re_ingest(
        demo_kb, tmp_path):
    """A version-7 snapshot counted Markdown offsets after the front matter: never served."""
    report = build(demo_kb, tmp_path)
    assert readiness(Settings(home=tmp_path, embedder="hashing"), HashingEmbedder()).ok
    fp = {**Catalog(tmp_path).get(report.snapshot_id).fingerprint,
          "knowledge_schema_version": 7}
    with sqlite3.connect(tmp_path / "catalog.sqlite") as db:
        db.execute("UPDATE snapshots SET fingerprint=? WHERE snapshot_id=?",
                   (json.dumps(fp), report.snapshot_id))
    ready = readiness(Settings(home=tmp_path, embedder="hashing"), HashingEmbedder())
    assert not ready.ok
    assert ready.differences == (f"knowledge_schema_version: snapshot has 7, running "
                                 f"configuration has {KNOWLEDGE_SCHEMA_VERSION}",)
    assert "Re-ingest (`citadel ingest PATH`)" in ready.reason
