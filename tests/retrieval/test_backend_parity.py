"""The same questions over the demo KB on every backend: same schema, valid citations, and
rankings that agree where they should.

Backends: local, qdrant embedded in memory (`:memory:`) and on disk (`path=`), and postgres
(the test server). No Qdrant server is installable here, so Qdrant's `url=` mode, which
differs only in how the client is constructed, is not exercised by this suite.
"""

from __future__ import annotations

import datetime as dt

import pytest

from citadel.ingest.operator_metadata import SOURCES_FILE
from citadel.records import Chunk, RankedChunk
from citadel.text.quotes import normalize
from tests.backend_engines import BACKENDS, backend_settings, build_engine
from tests.conftest import DEMO_KB
from tests.helpers_kb import TENANT_DOCS, TENANTS, write_kb

QUESTIONS = (
    "How long do I have to return an item?",
    "How long are gift cards valid?",
    "How much does express delivery cost?",
    "How long is the warranty on a tent?",
    "How much is Northwind Plus?",
    "How do I delete my account?",
    "Can I cancel my order after it has shipped?",
    "How many loyalty points do I earn?",
    "How do I track my order?",
    "How long does international delivery take?",
    "How should I wash a waterproof jacket?",
    "Do you match a lower price from another shop?",
)

# Top-3 agreement with the local backend, averaged over QUESTIONS: at least 1.5 of 3.
# Why this bound: every backend sees the same vectors with exact cosine scores (HNSW over
# about a hundred points finds the exact neighbours), but the lexical rankers differ
# (tantivy BM25 with Porter stemming, our BM25 sparse vectors with light stemming + Qdrant
# IDF, PostgreSQL ts_rank) and so does fusion (local: weighted min-max, which lets one
# strong lexical match win, e.g. the forum post whose title repeats "how long do I have to
# return"; server backends: reciprocal-rank fusion, which rewards agreement). Identical
# order is therefore not expected; measured on the first 21-document demo KB: 26/12 ~ 2.2
# for Qdrant and for PostgreSQL. An unrelated ranking would average about 3 x 3/120 ~ 0.1,
# so 1.5 still catches a broken retriever or a lost filter while leaving room for fusion.
MIN_MEAN_TOP3_OVERLAP = 1.5


@pytest.fixture(scope="module")
def engines(tmp_path_factory, request):
    built = {}
    for name in BACKENDS:
        dsn = None
        if name == "postgres":
            try:
                dsn = request.getfixturevalue("postgres_database")
            except pytest.skip.Exception:
                continue
        settings = backend_settings(name, tmp_path_factory.mktemp(name), dsn)
        built[name] = build_engine(settings, [DEMO_KB])
    yield built
    for engine in built.values():
        engine.close()


@pytest.fixture(params=BACKENDS)
def engine(request, engines):
    if request.param not in engines:
        pytest.skip(f"{request.param} is not available (run the suite with `make test`)")
    return engines[request.param]


def search(engine, question: str, k: int):
    """The backend's own ranking (no supersession stand-ins, which the engine adds after)."""
    return engine.index.search(question, engine.embedder.embed_query(question), k)


def test_every_backend_returns_the_same_ranked_schema(engine, engines):
    local = engines["local"]
    for question in QUESTIONS[:4]:
        ranked = search(engine, question, 8)
        assert len(ranked) == 8
        assert [r.rank for r in ranked] == list(range(1, 9))
        scores = [r.retrieval_score for r in ranked]
        assert scores == sorted(scores, reverse=True)
        for r in ranked:
            assert type(r) is RankedChunk and type(r.chunk) is Chunk
            assert 0.0 <= r.retrieval_score <= 1.0
            assert r.dense_score is not None and -1.0 <= r.dense_score <= 1.0
            # Identity and source fields are stored and read back exactly.
            assert r.chunk == local.index.get_chunk(r.chunk_id)
            assert isinstance(r.chunk.effective_date, dt.date | None)
        assert any(r.lexical_score is not None for r in ranked)


def test_every_backend_stores_documents_and_chunks_in_full(engine, engines):
    local = engines["local"]
    counts = engine.index.count()
    assert counts == local.index.count()
    # Every file of the demo KB is a document, but the operator's metadata file.
    files = [p for p in DEMO_KB.iterdir() if p.name != SOURCES_FILE]
    assert counts["documents"] == len(files)
    assert counts["chunks"] == counts["dense"] == counts["lexical"] > counts["documents"]
    assert engine.index.chunks_of("gift-cards") == local.index.chunks_of("gift-cards")
    assert engine.index.get_document("gift-cards") == local.index.get_document("gift-cards")
    assert engine.index.get_chunk("no-such#1") is None
    assert engine.index.get_document("no-such") is None


def test_every_backend_answers_with_valid_citations(engine, engines):
    local = engines["local"]
    for question in QUESTIONS:
        answer = engine.answer(question)
        expected = local.answer(question)
        assert answer.grounded == expected.grounded, question
        assert answer.trace.retrieval_ok and answer.trace.malformed_skipped == 0
        if not answer.grounded:
            assert answer.citations == ()
        for c in answer.citations:
            assert c.chunk_id in answer.trace.retrieved
            assert c.snapshot_id == engine.index.snapshot_id
            chunk = engine.index.get_chunk(c.chunk_id)
            assert chunk.content_sha256 == c.content_sha256
            assert normalize(c.quote) in normalize(chunk.content)
            doc = engine.index.get_document(c.document_id)
            assert doc.text[c.start : c.end] == c.quote
            assert (c.source, c.title) == (chunk.source, chunk.title)


def test_trace_records_backend_and_strategy(engine):
    trace = engine.answer(QUESTIONS[1]).trace
    assert trace.backend == engine.index.backend
    assert trace.backend in {"local", "qdrant", "postgres"}
    assert trace.strategy == engine.index.strategy and trace.strategy


def test_top3_overlap_with_local_meets_the_parity_bound(engine, engines):
    local = engines["local"]
    overlaps = []
    for question in QUESTIONS:
        mine = [r.chunk_id for r in search(engine, question, 8)]
        theirs = [r.chunk_id for r in search(local, question, 16)]
        overlaps.append(len(set(mine[:3]) & set(theirs[:3])))
        # The best chunk of any backend is within local's top 2 x top_k: the fusions may
        # reorder the shared candidate pool (measured: the refund policy's eligibility chunk
        # is RRF's first and 9th under local's weighted fusion, behind four forum chunks).
        assert mine[0] in theirs, question
    assert sum(overlaps) / len(overlaps) >= MIN_MEAN_TOP3_OVERLAP, overlaps


def test_qdrant_memory_and_path_modes_agree(engines):
    # Not rank for rank: within each prefetch Qdrant orders exactly tied scores (common with
    # the hashing embedder) by internal storage order, which differs between a fresh
    # in-memory collection and one reloaded from disk, and a swap shifts RRF scores below.
    for question in QUESTIONS:
        memory = engines["qdrant-memory"].retrieve(question, 3, None, None)
        path = engines["qdrant-path"].retrieve(question, 3, None, None)
        assert {r.chunk_id for r in memory} == {r.chunk_id for r in path}, question
        a, b = engines["qdrant-memory"].answer(question), engines["qdrant-path"].answer(question)
        assert [c.chunk_id for c in a.citations] == [c.chunk_id for c in b.citations]


def test_category_filter_on_every_backend(engine):
    ranked = engine.retrieve("how long", None, None, "warranty")
    assert ranked and {r.chunk.category for r in ranked} == {"warranty"}


@pytest.mark.parametrize("name", BACKENDS)
def test_tenant_filter_keeps_public_and_own_documents(name, tmp_path, request):
    dsn = request.getfixturevalue("make_postgres_database")() if name == "postgres" else None
    kb = write_kb(tmp_path / "kb", TENANT_DOCS, TENANTS)
    engine = build_engine(backend_settings(name, tmp_path / "home", dsn), [kb])
    try:
        ranked = engine.retrieve("refunds take days", None, "acme", None)
        assert {r.chunk.document_id for r in ranked} == {"a", "c"}
        # No tenant: public documents only (tests/security/test_tenants.py has the attacks).
        public = engine.retrieve("refunds take days", None, None, None)
        assert {r.chunk.document_id for r in public} == {"c"}
    finally:
        engine.close()
