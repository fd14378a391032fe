"""The local backend's ANN index (faiss HNSW + exact rescoring): built with the snapshot,
fingerprinted, equal to exact search where its recall is 1, refused clearly without faiss."""

from __future__ import annotations

from pathlib import Path

import pytest

from citadel.config import Settings
from citadel.engine import Engine, NotReady
from citadel.ingest.pipeline import ingest
from citadel.knowledge.snapshots import Catalog
from citadel.retrieval import ann
from citadel.retrieval.backends import local
from citadel.retrieval.embedders.hashing import HashingEmbedder
from tests.documents import block_import

TOPICS = ["refunds", "delivery", "warranty", "gift cards", "repairs", "accounts"]
QUESTIONS = ["How long do refunds take?", "Is delivery free?", "warranty on tents",
             "Can I repair a zip?", "delete my account", "gift card balance"]


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ann-kb")
    for i in range(60):
        topic = TOPICS[i % len(TOPICS)]
        (root / f"doc-{i:02d}.md").write_text(
            f"---\ncategory: {topic.split()[0]}\n---\n# {topic.title()} note {i}\n\n"
            f"Our {topic} rule number {i} applies to orders placed after day {i % 28 + 1}. "
            f"Customers asking about {topic} get an answer within {i % 9 + 1} hours.\n")
    (root / "citadel-sources.toml").write_text("".join(
        f'[sources."doc-{i:02d}.md"]\ntenant = "acme"\n' for i in range(0, 60, 5)))
    return root


def _build(kb: Path, home: Path, **overrides) -> tuple[Settings, str]:
    settings = Settings(home=home, embedder="hashing", **overrides)
    report = ingest([kb], settings, embedder=HashingEmbedder(), progress=False)
    return settings, report.snapshot_id


def _ranked(settings: Settings, question: str, tenant=None, category=None):
    engine = Engine.open(settings, embedder=HashingEmbedder())
    try:
        return [(r.chunk.chunk_id, r.retrieval_score, r.dense_score)
                for r in engine.retrieve(question, None, tenant, category)]
    finally:
        engine.close()


@pytest.fixture(scope="module")
def built(kb: Path, tmp_path_factory: pytest.TempPathFactory):
    exact = _build(kb, tmp_path_factory.mktemp("exact"), ann_min_chunks=0)
    approx = _build(kb, tmp_path_factory.mktemp("approx"), ann_min_chunks=1)
    return exact, approx


def test_snapshot_past_the_threshold_carries_an_hnsw_graph(built):
    (exact, exact_id), (approx, approx_id) = built
    assert not (exact.home / "snapshots" / exact_id / ann.FILE).exists()
    assert (approx.home / "snapshots" / approx_id / ann.FILE).is_file()
    manifest = Catalog(approx.home).read_manifest(approx_id)
    assert manifest.fingerprint["dense_index"] == ann.AnnParams().fingerprint()
    engine = Engine.open(approx, embedder=HashingEmbedder())
    try:
        assert "faiss-hnsw" in engine.index.strategy
    finally:
        engine.close()


def test_ann_search_equals_exact_search_where_recall_is_one(built):
    (exact, _), (approx, _) = built
    for question in QUESTIONS:
        assert _ranked(approx, question) == _ranked(exact, question), question


def test_filtered_ann_search_equals_exact_search(built, monkeypatch):
    (exact, _), (approx, _) = built
    monkeypatch.setattr(local, "ANN_MIN_FILTERED", 0)  # walk the graph even for a filter
    for question in QUESTIONS:
        for tenant, category in (("acme", None), (None, "warranty"), ("acme", "refunds")):
            want = _ranked(exact, question, tenant, category)
            assert want and _ranked(approx, question, tenant, category) == want


def test_parallel_legs_rank_exactly_as_sequential_ones(built, monkeypatch):
    (exact, _), (approx, _) = built
    cases = [(q, t, c) for q in QUESTIONS for t, c in ((None, None), ("acme", None),
                                                       (None, "warranty"))]
    want = {s.home: [_ranked(s, *case) for case in cases] for s in (exact, approx)}
    monkeypatch.setattr(local, "PARALLEL_MIN_ROWS", 0)  # this small snapshot too
    for settings in (exact, approx):
        engine = Engine.open(settings, embedder=HashingEmbedder())
        try:
            assert engine.index._legs is not None
        finally:
            engine.close()
        assert [_ranked(settings, *case) for case in cases] == want[settings.home]


def test_ann_parameters_change_the_snapshot_id(kb, tmp_path, built):
    (_, exact_id), (_, approx_id) = built
    _, m16_id = _build(kb, tmp_path / "m16", ann_min_chunks=1, ann_m=16)
    _, ef_id = _build(kb, tmp_path / "ef", ann_min_chunks=1, ann_ef_construction=64)
    assert len({exact_id, approx_id, m16_id, ef_id}) == 4
    # The query breadth is not part of the artifact: same snapshot, reused.
    _, same_id = _build(kb, tmp_path / "m16", ann_min_chunks=1, ann_m=16, ann_ef_search=64)
    assert same_id == m16_id


def test_exact_snapshot_names_no_ann_index(built):
    (exact, exact_id), _ = built
    assert Catalog(exact.home).read_manifest(exact_id).fingerprint.get("dense_index") is None


def test_ann_snapshot_reopens_without_rebuilding(kb, built, monkeypatch):
    _, (approx, approx_id) = built
    graph = approx.home / "snapshots" / approx_id / ann.FILE
    mtime = graph.stat().st_mtime_ns

    def refuse(*args, **kwargs):
        raise AssertionError("the graph was rebuilt")

    monkeypatch.setattr(ann, "build", refuse)
    report = ingest([kb], approx, embedder=HashingEmbedder(), progress=False)
    assert report.reused and report.snapshot_id == approx_id
    assert _ranked(approx, QUESTIONS[0])
    assert graph.stat().st_mtime_ns == mtime


def test_ann_snapshot_without_faiss_is_not_ready_and_says_how_to_install(built, monkeypatch):
    _, (approx, _) = built
    block_import(monkeypatch, "faiss")
    with pytest.raises(NotReady, match=r"pip install -e '\.\[ann\]'"):
        Engine.open(approx, embedder=HashingEmbedder())


def test_ingest_without_faiss_searches_exactly(kb, tmp_path, monkeypatch, built):
    (exact, exact_id), _ = built
    block_import(monkeypatch, "faiss")
    settings, snapshot_id = _build(kb, tmp_path / "nofaiss", ann_min_chunks=1)
    assert snapshot_id == exact_id
    assert not (settings.home / "snapshots" / snapshot_id / ann.FILE).exists()


def test_default_walk_breadth_grows_with_the_graph():
    assert ann.default_ef_search(1_000) == 400
    assert ann.default_ef_search(100_000) == 400
    assert ann.default_ef_search(1_000_000) == 1265  # 400 x sqrt(10), rounded up
    assert ann.default_ef_search(400_000) == 800


def test_configured_walk_breadth_wins_over_the_default(built):
    _, (approx, approx_id) = built
    path = approx.home / "snapshots" / approx_id / ann.FILE
    assert ann.AnnIndex(path).ef_search == 400
    assert ann.AnnIndex(path, 64).ef_search == 64
