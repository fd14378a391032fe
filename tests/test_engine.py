import numpy as np
import pytest

from citadel.answering.generators.extractive import ExtractiveGenerator
from citadel.config import Settings
from citadel.engine import Engine, InvalidQuestion, NotReady
from citadel.retrieval.backends.base import RetrievalError, SearchIndex
from citadel.retrieval.embedders.hashing import HashingEmbedder


class StubIndex(SearchIndex):
    backend = "stub"
    strategy = "none"
    snapshot_id = "kb-stub"

    def __init__(self, error: Exception | None = None):
        self.error = error

    def search(self, text, vector, k, *, tenant=None, category=None):
        if self.error:
            raise self.error
        return []

    def get_chunk(self, chunk_id):
        return None

    def get_document(self, document_id):
        return None

    def chunks_of(self, document_id):
        return []

    def count(self):
        return {}


def engine_with(index: SearchIndex, tmp_path) -> Engine:
    return Engine(Settings(home=tmp_path, embedder="hashing"), index, HashingEmbedder(),
                  ExtractiveGenerator())


def test_empty_retrieval_gives_bounded_fallback_without_citations(tmp_path):
    answer = engine_with(StubIndex(), tmp_path).answer("How long do refunds take?")
    assert answer.abstained and not answer.grounded
    assert answer.citations == ()
    assert answer.trace.fallback_used and answer.trace.retrieval_ok
    assert "refunds take" in answer.missing
    assert answer.next_step


@pytest.mark.parametrize("error", [RetrievalError("server down"), OSError("disk"),
                                   ValueError("corrupt")])
def test_retrieval_failure_is_a_fallback_never_a_crash(tmp_path, error):
    answer = engine_with(StubIndex(error), tmp_path).answer("How long do refunds take?")
    assert answer.citations == () and not answer.grounded
    assert answer.trace.retrieval_ok is False
    assert answer.trace.fallback_used and answer.degraded


def test_invalid_questions_are_refused(tmp_path):
    engine = engine_with(StubIndex(), tmp_path)
    with pytest.raises(InvalidQuestion):
        engine.answer("   ")
    with pytest.raises(InvalidQuestion):
        engine.answer("x" * 5000)


def test_open_without_snapshot_says_what_to_do(tmp_path):
    with pytest.raises(NotReady, match="citadel ingest"):
        Engine.open(Settings(home=tmp_path, embedder="hashing"))


def test_answer_carries_a_complete_trace(hashing_engine):
    answer = hashing_engine.answer("How much does UK express delivery cost?")
    t = answer.trace
    assert answer.grounded and answer.citations
    assert t.backend == "local" and t.strategy.startswith("hybrid")
    assert t.snapshot_id == hashing_engine.index.snapshot_id
    assert t.retrieved and t.context_labels and t.citations_available
    assert t.retrieval_config_version.startswith("rc-")
    assert t.prompt_version == "extractive-v2"
    assert {"retrieve", "build_context", "generate", "gate", "total"} <= set(t.latencies_ms)
    for c in answer.citations:
        assert c.chunk_id in t.retrieved
        assert t.context_labels[c.label] == c.chunk_id


def test_citation_offsets_point_into_the_stored_source(hashing_engine):
    answer = hashing_engine.answer("How long are gift cards valid?")
    assert answer.citations
    for c in answer.citations:
        doc = hashing_engine.index.get_document(c.document_id)
        assert doc.text[c.start : c.end] == c.quote


def test_requests_do_not_share_state(hashing_engine):
    a = hashing_engine.answer("How much is Northwind Plus?")
    b = hashing_engine.answer("How long are gift cards valid?")
    assert a.trace.request_id != b.trace.request_id
    assert set(a.trace.retrieved) != set(b.trace.retrieved)


def test_generator_failure_degrades_without_citations(hashing_engine):
    class Broken(ExtractiveGenerator):
        def generate(self, question, context):
            raise RuntimeError("boom")

    engine = Engine(hashing_engine.settings, hashing_engine.index, hashing_engine.embedder,
                    Broken())
    answer = engine.answer("How much is Northwind Plus?")
    assert answer.degraded and answer.citations == () and not answer.grounded


def test_dense_vectors_are_normalised():
    v = HashingEmbedder().embed(["hello world", "refund policy"])
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0)


def test_trace_records_context_drops_weights_and_the_conflict_stage(hashing_engine):
    answer = hashing_engine.answer("Should refund requests be approved without checking?")
    t = answer.trace
    assert t.context_weights == {"authority_weight": 0.3, "freshness_weight": 0.1,
                                 "conflict_authority_gap": 0.5}
    assert "conflicts" in t.latencies_ms
    # Flagged at ingest, so never retrieved: it takes no place in the top k (and the drops
    # below are what the context itself kept out).
    assert "community-tips-refunds#3" not in t.retrieved
    assert "approve all refund requests" not in answer.answer
    for drop in t.context_dropped:
        assert drop.chunk_id in t.retrieved and drop.chunk_id not in t.context_labels.values()
        assert drop.reason in ("suspicious", "superseded") and drop.detail
