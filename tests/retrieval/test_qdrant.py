"""The Qdrant adapter, exercised in qdrant-client's embedded mode (`:memory:` and `path=`).

No Qdrant server can be installed here. The `url=` code path is the same apart from the
client constructor; below it is pointed at a closed port and at a socket that never answers,
which is how an unavailable server looks to the client.
"""

from __future__ import annotations

import socket
from pathlib import Path

import numpy as np
import pytest

from citadel.answering.fallbacks import RETRIEVAL_FAILED
from citadel.config import Settings
from citadel.engine import Engine, NotReady
from citadel.ingest.pipeline import ingest
from citadel.knowledge.snapshots import Catalog, SnapshotError
from citadel.retrieval.backends import RetrievalError, get_backend
from citadel.retrieval.backends.qdrant import QdrantBackend, point_id
from citadel.retrieval.embedders.hashing import HashingEmbedder
from tests.backend_engines import backend_settings, build_engine, silent_server
from tests.conftest import DEMO_KB

pytest.importorskip("qdrant_client")
from qdrant_client import QdrantClient, models  # noqa: E402

GIFT = "How long are gift cards valid?"


def small_kb(root: Path, name: str, text: str) -> Path:
    kb = root / name
    kb.mkdir()
    (kb / f"{name}.md").write_text(f"# {name.title()}\n\n{text}\n")
    return kb


@pytest.fixture
def memory_engine(tmp_path):
    engine = build_engine(backend_settings("qdrant-memory", tmp_path), [DEMO_KB])
    yield engine
    engine.close()


def test_malformed_points_are_skipped_counted_and_never_cited(memory_engine):
    index = memory_engine.index
    real = index.get_chunk("gift-cards#3")
    good = real.model_dump(mode="json")
    malformed = [
        {k: v for k, v in good.items() if k != "source"} | {"chunk_id": "forged#1"},
        good | {"chunk_id": "forged#2", "start": "16"},        # wrong type, never coerced
        {k: v for k, v in good.items() if k != "chunk_id"},   # no identity at all
        good | {"chunk_id": "forged#4", "authority": "high"},
    ]
    vector = HashingEmbedder().embed([f"{real.title}\n{real.content}"])[0]
    with index._owner.client() as client:
        stored = client.retrieve(index.snapshot_id, [point_id("gift-cards#3")],
                                 with_vectors=True)[0].vector
        client.upsert(index.snapshot_id, [
            models.PointStruct(id=point_id(f"forged-{i}"),
                               vector={"": vector.tolist(), "lexical": stored["lexical"]},
                               payload=payload)
            for i, payload in enumerate(malformed)
        ])
    result = index.search_result(GIFT, HashingEmbedder().embed_query(GIFT), 8)
    assert result.malformed_skipped == len(malformed)
    assert len(result.ranked) == 8
    assert [r.rank for r in result.ranked] == list(range(1, 9))
    assert not any(r.chunk_id.startswith("forged") for r in result.ranked)

    answer = memory_engine.answer(GIFT)
    assert answer.trace.malformed_skipped == len(malformed)
    assert answer.grounded and answer.citations
    assert all(c.chunk_id == "gift-cards#3" for c in answer.citations)
    assert not any("forged" in r for r in answer.trace.retrieved)
    assert index.get_chunk("forged#1") is None


def test_alias_is_switched_with_one_call_and_read_back(tmp_path, monkeypatch):
    calls = []
    original = QdrantClient.update_collection_aliases

    def spy(self, change_aliases_operations, **kwargs):
        calls.append(change_aliases_operations)
        return original(self, change_aliases_operations=change_aliases_operations, **kwargs)

    monkeypatch.setattr(QdrantClient, "update_collection_aliases", spy)
    settings = backend_settings("qdrant-path", tmp_path / "home")
    first = ingest([small_kb(tmp_path, "tents", "Tents have a 2-year warranty.")], settings,
                   embedder=HashingEmbedder(), progress=False)
    second = ingest([small_kb(tmp_path, "stoves", "Stoves have a 1-year warranty.")],
                    settings, embedder=HashingEmbedder(), progress=False)
    assert [len(ops) for ops in calls] == [1, 2]  # create; then delete + create, one call
    assert isinstance(calls[1][0], models.DeleteAliasOperation)
    backend = get_backend(settings)  # a fresh client: the alias persisted on disk
    assert backend.engine_alias() == second.snapshot_id == Catalog(settings.home).alias()
    with backend.client() as client:
        aliases = client.get_aliases().aliases
    assert [(a.alias_name, a.collection_name) for a in aliases] == [
        ("citadel-active", second.snapshot_id)]
    assert backend.has_snapshot(first.snapshot_id)  # the old snapshot stays for rollback


def test_alias_name_is_configurable(tmp_path):
    settings = backend_settings("qdrant-path", tmp_path / "home", qdrant_alias="kb-live")
    report = ingest([small_kb(tmp_path, "tents", "Tents have a 2-year warranty.")], settings,
                    embedder=HashingEmbedder(), progress=False)
    backend = get_backend(settings)
    with backend.client() as client:
        assert [a.alias_name for a in client.get_aliases().aliases] == ["kb-live"]
    assert backend.engine_alias() == report.snapshot_id


def test_failed_mirror_leaves_the_catalog_alias_unchanged(tmp_path):
    settings = backend_settings("qdrant-path", tmp_path / "home")
    first = ingest([small_kb(tmp_path, "tents", "Tents have a 2-year warranty.")], settings,
                   embedder=HashingEmbedder(), progress=False)
    second = ingest([small_kb(tmp_path, "stoves", "Stoves have a 1-year warranty.")],
                    settings, embedder=HashingEmbedder(), progress=False, activate=False)
    catalog = Catalog(settings.home)

    def unavailable(snapshot_id: str) -> None:
        raise RetrievalError("qdrant is down")

    with pytest.raises(RetrievalError):
        catalog.switch(second.snapshot_id, mirror=unavailable)
    assert catalog.alias() == first.snapshot_id
    assert get_backend(settings).engine_alias() == first.snapshot_id
    with pytest.raises(SnapshotError):  # and nothing mirrors an incomplete snapshot
        catalog.switch("kb-unknown", mirror=get_backend(settings).activate)


def test_engine_refuses_an_alias_that_disagrees_with_the_catalog(tmp_path):
    settings = backend_settings("qdrant-path", tmp_path / "home")
    kb = small_kb(tmp_path, "tents", "Tents have a 2-year warranty.")
    report = ingest([kb], settings, embedder=HashingEmbedder(), progress=False)
    other = ingest([small_kb(tmp_path, "stoves", "Stoves have a 1-year warranty.")], settings,
                   embedder=HashingEmbedder(), progress=False, activate=False)
    get_backend(settings).activate(other.snapshot_id)  # someone moved the engine's alias
    with pytest.raises(NotReady, match="alias points at"):
        Engine.open(settings, embedder=HashingEmbedder())
    again = ingest([kb], settings, embedder=HashingEmbedder(), progress=False)
    assert again.reused and again.activated  # re-ingesting mirrors the alias again
    engine = Engine.open(settings, embedder=HashingEmbedder())
    assert engine.index.snapshot_id == report.snapshot_id
    engine.close()


def test_unfinished_collection_is_not_a_snapshot(tmp_path):
    backend = QdrantBackend(path=":memory:")
    with backend.client() as client:
        client.create_collection("kb-half", vectors_config=models.VectorParams(
            size=4, distance=models.Distance.COSINE))
    assert not backend.has_snapshot("kb-half")
    with pytest.raises(RetrievalError):
        backend.activate("kb-half")


def test_embedded_folder_is_released_between_ingest_and_engine(tmp_path):
    """Embedded storage admits one client per folder: an idle backend lets it go."""
    settings = backend_settings("qdrant-path", tmp_path / "home")
    ingest([DEMO_KB], settings, embedder=HashingEmbedder(), progress=False)
    engine = Engine.open(settings, embedder=HashingEmbedder())
    assert engine.answer(GIFT).grounded
    with pytest.raises(RetrievalError, match="already accessed"):  # held while serving
        get_backend(settings).has_snapshot(engine.index.snapshot_id)
    engine.close()
    assert get_backend(settings).has_snapshot(engine.index.snapshot_id)


def _assert_bounded_fallback(engine: Engine) -> None:
    answer = engine.answer(GIFT)
    assert answer.answer == RETRIEVAL_FAILED
    assert answer.citations == () and not answer.grounded and answer.abstained
    assert answer.trace.retrieval_ok is False and answer.trace.fallback_used
    assert answer.trace.citations_available is False
    assert answer.trace.backend == "qdrant"
    assert "qdrant (server)" in answer.trace.degraded_reasons[0]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_wrong_url_gives_bounded_fallback(tmp_path):
    home = tmp_path / "home"
    ingest([DEMO_KB], backend_settings("qdrant-path", home), embedder=HashingEmbedder(),
           progress=False)
    settings = Settings(home=home, embedder="hashing", backend="qdrant",
                        qdrant_url=f"http://127.0.0.1:{_free_port()}", backend_timeout=1)
    engine = Engine.open(settings, embedder=HashingEmbedder())
    _assert_bounded_fallback(engine)
    engine.close()


def test_server_that_never_answers_times_out_to_bounded_fallback(tmp_path):
    home = tmp_path / "home"
    ingest([DEMO_KB], backend_settings("qdrant-path", home), embedder=HashingEmbedder(),
           progress=False)
    with silent_server() as port:
        settings = Settings(home=home, embedder="hashing", backend="qdrant",
                            qdrant_url=f"http://127.0.0.1:{port}", backend_timeout=1)
        engine = Engine.open(settings, embedder=HashingEmbedder())
        _assert_bounded_fallback(engine)
        engine.close()


def test_settings_select_qdrant_from_environment_and_config_file(tmp_path):
    env = {"CITADEL_HOME": str(tmp_path), "CITADEL_BACKEND": "qdrant",
           "CITADEL_QDRANT_PATH": str(tmp_path / "q"), "CITADEL_QDRANT_ALIAS": "live"}
    backend = get_backend(Settings.load(env=env))
    assert isinstance(backend, QdrantBackend)
    assert (backend.mode, backend.path, backend.alias) == ("embedded", str(tmp_path / "q"),
                                                           "live")
    (tmp_path / "config.toml").write_text(
        'backend = "qdrant"\nqdrant_url = "http://127.0.0.1:6333"\nbackend_timeout = 2.5\n')
    backend = get_backend(Settings.load(env={"CITADEL_HOME": str(tmp_path)}))
    assert (backend.mode, backend.url, backend.timeout) == ("server", "http://127.0.0.1:6333",
                                                            2.5)
    default = get_backend(Settings(home=tmp_path, backend="qdrant"))
    assert default.path == str(tmp_path / "qdrant")


def test_snapshot_ids_differ_per_backend(tmp_path):
    """Lexical semantics are part of the fingerprint: switching CITADEL_BACKEND on one home
    builds a new snapshot instead of reusing one whose scores meant something else."""
    local = ingest([DEMO_KB], Settings(home=tmp_path, embedder="hashing"),
                   embedder=HashingEmbedder(), progress=False)
    qdrant = ingest([DEMO_KB], backend_settings("qdrant-path", tmp_path),
                    embedder=HashingEmbedder(), progress=False)
    assert local.snapshot_id != qdrant.snapshot_id and not qdrant.reused
    with pytest.raises(NotReady, match="lexical.engine"):
        Engine.open(Settings(home=tmp_path, embedder="hashing"), embedder=HashingEmbedder())


def test_sparse_vectors_are_bm25_weights():
    from citadel.retrieval import sparse

    short, long = sparse.document_vectors(["tent tent", "tent " + "stove " * 20])
    assert len(short.indices) == 1 and len(long.indices) == 2
    # Saturation: two occurrences weigh less than twice one; length: shorter weighs more.
    tent = sparse.term_id("tent")
    w_short = dict(zip(short.indices, short.values, strict=True))[tent]
    w_long = dict(zip(long.indices, long.values, strict=True))[tent]
    assert w_long < w_short < 2 * (sparse.K1 + 1) / 2
    q = sparse.query_vector("Which tent? tent!")
    assert q.indices == [tent] and q.values == [1.0]
    assert np.isclose(sparse.overlap_score(q, short), w_short)
