from citadel.config import Settings
from citadel.engine import Engine
from citadel.ingest.pipeline import ingest
from citadel.knowledge.snapshots import Catalog
from citadel.retrieval.embedders.hashing import HashingEmbedder
from tests.conftest import DEMO_KB
from tests.helpers_kb import TENANT_DOCS, TENANTS, write_kb


class CountingEmbedder(HashingEmbedder):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def embed(self, texts):
        self.calls += len(texts)
        return super().embed(texts)


def test_ranked_chunks_carry_dense_lexical_and_fused_scores(hashing_engine):
    ranked = hashing_engine.retrieve("gift card validity", None, None, None)
    assert [r.rank for r in ranked] == list(range(1, len(ranked) + 1))
    assert all(r.retrieval_score is not None for r in ranked)
    assert any(r.lexical_score for r in ranked) and any(r.dense_score for r in ranked)
    scores = [r.retrieval_score for r in ranked]
    assert scores == sorted(scores, reverse=True)


def test_snapshot_persists_and_reopens_without_reembedding(tmp_path):
    settings = Settings(home=tmp_path, embedder="hashing")
    embedder = CountingEmbedder()
    report = ingest([DEMO_KB], settings, embedder=embedder, progress=False)
    built = embedder.calls
    assert built >= report.chunks
    engine = Engine.open(settings, embedder=embedder)
    answer = engine.answer("How long are gift cards valid?")
    assert answer.grounded
    assert embedder.calls - built <= 1  # only the question was embedded
    again = ingest([DEMO_KB], settings, embedder=embedder, progress=False)
    assert again.reused and again.snapshot_id == report.snapshot_id
    assert Catalog(tmp_path).alias() == report.snapshot_id


def test_category_filter_restricts_results(hashing_engine):
    ranked = hashing_engine.retrieve("how long", None, None, "warranty")
    assert ranked and {r.chunk.category for r in ranked} == {"warranty"}


def test_tenant_filter_keeps_public_and_own_documents(tmp_path):
    kb = write_kb(tmp_path / "kb", TENANT_DOCS, TENANTS)
    settings = Settings(home=tmp_path / "home", embedder="hashing")
    ingest([kb], settings, embedder=HashingEmbedder(), progress=False)
    engine = Engine.open(settings, embedder=HashingEmbedder())
    ranked = engine.retrieve("refunds take days", None, "acme", None)
    assert {r.chunk.document_id for r in ranked} == {"a", "c"}
    assert {r.chunk.document_id for r in engine.retrieve("refunds take days", None, None,
                                                         None)} == {"c"}
