"""Incremental re-ingest: unchanged chunks reuse their embeddings and their analyses."""

import sqlite3

import numpy as np

from citadel.config import Settings
from citadel.ingest.analysis import analyse_chunks, analyser_key
from citadel.ingest.chunking import ChunkingParams
from citadel.ingest.embedding_cache import EmbeddingCache, embed_cached, text_key
from citadel.ingest.loaders import load_corpus
from citadel.ingest.pipeline import chunk_documents, index_text, ingest
from citadel.retrieval.embedders.hashing import HashingEmbedder
from citadel.text.analysis import Analyser
from tests.helpers_kb import chunk


class CountingEmbedder(HashingEmbedder):
    def __init__(self, dimension: int = 256):
        super().__init__(dimension)
        self.texts: list[str] = []

    def embed(self, texts):
        self.texts.extend(texts)
        return super().embed(texts)


def _dense(home, snapshot_id):
    return np.load(home / "snapshots" / snapshot_id / "dense.npy")


def test_reingest_after_one_document_changed_embeds_only_its_changed_chunks(demo_kb, tmp_path):
    home = tmp_path / "home"
    settings = Settings(home=home, embedder="hashing")
    embedder = CountingEmbedder()
    first = ingest([demo_kb], settings, embedder=embedder, progress=False)
    assert len(embedder.texts) == first.embedded == first.chunks

    doc = demo_kb / "gift-cards.html"
    doc.write_text(doc.read_text().replace("valid for", "valid, from purchase, for"))
    embedder.texts.clear()
    second = ingest([demo_kb], settings, embedder=embedder, progress=False)
    assert second.snapshot_id != first.snapshot_id and not second.reused
    changed = [c for c in chunk_documents(load_corpus([demo_kb]).documents, ChunkingParams())
               if c.document_id == "gift-cards" and "valid, from purchase, for" in c.content]
    assert 1 <= second.embedded == len(embedder.texts) == len(changed) < first.chunks // 10
    assert sorted(embedder.texts) == sorted(index_text(c) for c in changed)
    assert second.cached == second.chunks - second.embedded

    # The incremental snapshot is exactly what a full build in a fresh home produces.
    fresh = ingest([demo_kb], Settings(home=tmp_path / "fresh", embedder="hashing"),
                   embedder=HashingEmbedder(), progress=False)
    assert fresh.snapshot_id == second.snapshot_id and fresh.embedded == fresh.chunks
    np.testing.assert_array_equal(_dense(home, second.snapshot_id),
                                  _dense(tmp_path / "fresh", fresh.snapshot_id))


def test_cache_is_keyed_by_embedder(tmp_path):
    cache = EmbeddingCache(tmp_path / "cache.sqlite")
    texts = ["refunds take five days", "gift cards never expire", "refunds take five days"]
    a = CountingEmbedder()
    vectors, embedded = embed_cached(a, texts, cache)
    assert embedded == 2 and len(a.texts) == 2  # the duplicate text is embedded once
    np.testing.assert_array_equal(vectors, HashingEmbedder().embed(texts))
    assert embed_cached(a, texts, cache)[1] == 0
    other = CountingEmbedder(dimension=64)
    vectors64, embedded64 = embed_cached(other, texts, cache)
    assert embedded64 == 2 and vectors64.shape == (3, 64)


def test_unreadable_cache_is_bypassed_not_fatal(tmp_path):
    path = tmp_path / "cache.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    vectors, embedded = embed_cached(HashingEmbedder(), ["a b c", "d e f"], EmbeddingCache(path))
    assert embedded == 2 and vectors.shape == (2, 256)


def test_wrong_size_vectors_in_cache_count_as_missing(tmp_path):
    cache = EmbeddingCache(tmp_path / "cache.sqlite")
    embedder = CountingEmbedder()
    embed_cached(embedder, ["refunds take five days"], cache)
    with sqlite3.connect(cache.path) as db:
        db.execute("UPDATE embeddings SET vector = x'00'")
    vectors, embedded = embed_cached(embedder, ["refunds take five days"], cache)
    assert embedded == 1
    np.testing.assert_array_equal(vectors, HashingEmbedder().embed(["refunds take five days"]))


class CountingAnalyser(Analyser):
    def __init__(self):
        super().__init__()
        self.contents: list[str] = []

    def analyse_chunks(self, contents):
        self.contents.extend(contents)
        return super().analyse_chunks(contents)


def test_reingest_analyses_only_changed_contents_and_stores_the_same_analysis(demo_kb,
                                                                              tmp_path):
    chunks = chunk_documents(load_corpus([demo_kb]).documents, ChunkingParams(800, 120))[:12]
    cache = EmbeddingCache(tmp_path / "cache.sqlite")
    first, analysed = analyse_chunks(chunks, CountingAnalyser(), False, cache)
    assert analysed == len({c.content for c in chunks})

    changed = [*chunks[:-1], chunks[-1].model_copy(update={"content": "Lyon is in France."})]
    analyser = CountingAnalyser()
    again, analysed = analyse_chunks(changed, analyser, False, cache)
    assert (analysed, analyser.contents) == (1, ["Lyon is in France."])
    assert [c.analysis for c in again[:-1]] == [c.analysis for c in first[:-1]]
    assert again[-1].analysis == Analyser().analyse_chunks(["Lyon is in France."])[0]


def test_unreadable_cached_analysis_is_analysed_again(tmp_path):
    cache = EmbeddingCache(tmp_path / "cache.sqlite")
    analyser = Analyser()
    cache.put_analyses(analyser_key(analyser), [(text_key("Lyon is in France."), b"garbage")])
    [c], analysed = analyse_chunks([chunk("a#1", "Lyon is in France.")], analyser, False, cache)
    assert analysed == 1 and c.analysis is not None and c.analysis.sentences
