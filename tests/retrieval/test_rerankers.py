import hashlib
import math

import pytest

from citadel.config import Settings
from citadel.records import Chunk, RankedChunk
from citadel.retrieval.rerankers import RerankerUnavailable, get_reranker
from citadel.retrieval.rerankers.base import MalformedRerank, apply_scores
from citadel.retrieval.rerankers.http import HttpReranker, parse_scores, request_body
from citadel.retrieval.rerankers.lexical import LexicalReranker, numeric_question, proximity_score
from citadel.retrieval.rerankers.stage import check_result, rerank_stage
from tests.rerank_server import closed_port_url, rerank_server


def ranked(*contents: str, titles: tuple[str, ...] = ()) -> list[RankedChunk]:
    out = []
    for i, content in enumerate(contents):
        title = titles[i] if i < len(titles) else "Doc"
        chunk = Chunk(chunk_id=f"d{i}#1", document_id=f"d{i}", source=f"d{i}.md", title=title,
                      section=title, content=content, start=0, end=len(content),
                      content_sha256=hashlib.sha256(content.encode()).hexdigest())
        out.append(RankedChunk(chunk=chunk, retrieval_score=1.0 - 0.1 * i, rank=i + 1))
    return out


def test_apply_scores_sorts_and_never_changes_chunk_identity():
    before = ranked("a b", "c d", "e f")
    after = apply_scores(before, [0.1, 0.9, 0.5])
    assert [r.chunk_id for r in after] == ["d1#1", "d2#1", "d0#1"]
    by_id = {r.chunk_id: r for r in before}
    for r in after:
        assert r.chunk == by_id[r.chunk_id].chunk
        assert r.rank == by_id[r.chunk_id].rank  # the fused rank stays visible
        assert r.retrieval_score == by_id[r.chunk_id].retrieval_score
    assert [r.rerank_score for r in after] == [0.9, 0.5, 0.1]


@pytest.mark.parametrize("scores", [[0.1], [0.1, float("nan"), 0.2], [0.1, "x", 0.2]])
def test_apply_scores_rejects_missing_or_non_finite_scores(scores):
    with pytest.raises(MalformedRerank):
        apply_scores(ranked("a", "b", "c"), scores)


def test_lexical_prefers_exact_phrase_and_coverage_over_fused_order():
    pool = ranked(
        "Gift cards can be bought online and in store.",
        "Delivery is free on orders over £50.",
        "Gift cards are valid for five years from purchase.",
    )
    out = LexicalReranker(blend=0.6).rerank("How long are gift cards valid?", pool)
    assert out[0].chunk_id == "d2#1"


def test_lexical_numeric_cue_prefers_a_stated_duration():
    pool = ranked(
        "Refunds are processed by our finance team after the return is inspected.",
        "Refunds are processed within 5 business days of the return arriving.",
    )
    assert numeric_question("How long do refunds take?") is not None
    assert numeric_question("Who processes refunds?") is None
    out = LexicalReranker(blend=0.6).rerank("How long do refunds take to be processed?", pool)
    assert out[0].chunk_id == "d1#1"


def test_lexical_heading_match_counts():
    pool = ranked("Contact us for details.", "Contact us for details.",
                  titles=("Privacy Policy", "Warranty"))
    out = LexicalReranker(blend=1.0).rerank("warranty claims", pool)
    assert out[0].chunk_id == "d1#1"


def test_lexical_is_deterministic_and_keeps_the_candidate_set():
    pool = ranked("alpha beta gamma", "beta gamma delta", "gamma delta alpha", "x y z")
    a = LexicalReranker().rerank("alpha gamma", pool)
    b = LexicalReranker().rerank("alpha gamma", pool)
    assert a == b
    assert check_result(pool, a) is None


def test_lexical_question_without_content_terms_keeps_fused_order():
    pool = ranked("a b", "c d")
    assert [r.chunk_id for r in LexicalReranker().rerank("what is it?", pool)] == ["d0#1", "d1#1"]


def test_proximity_rewards_tight_windows_of_many_question_terms():
    assert proximity_score({"a", "b"}, ["a", "b", "x"]) == 1.0
    assert proximity_score({"a", "b"}, ["a", "x", "x", "b"]) == 0.5
    assert proximity_score({"a", "b"}, ["a", "x"]) == 0.0
    assert proximity_score({"a", "b", "c", "d"}, ["a", "b"]) == 0.5  # 2 of 4 terms


def test_tei_and_cohere_bodies():
    assert request_body("tei", "q", ["t"]) == {"query": "q", "texts": ["t"], "truncate": True}
    assert request_body("cohere", "q", ["t", "u"], "m") == {
        "query": "q", "documents": ["t", "u"], "top_n": 2, "model": "m"}


def test_parse_scores_puts_scores_back_in_candidate_order():
    assert parse_scores("tei", [{"index": 1, "score": 0.9}, {"index": 0, "score": 0.2}], 2) == [
        0.2, 0.9]
    data = {"results": [{"index": 1, "relevance_score": 3}, {"index": 0, "relevance_score": -1}]}
    assert parse_scores("cohere", data, 2) == [-1.0, 3.0]


@pytest.mark.parametrize("protocol,data", [
    ("tei", {"results": []}),
    ("tei", [{"index": 0, "score": 0.1}]),  # one of two texts scored
    ("tei", [{"index": 0, "score": 0.1}, {"index": 0, "score": 0.2}]),  # repeated
    ("tei", [{"index": 0, "score": 0.1}, {"index": 5, "score": 0.2}]),  # out of range
    ("tei", [{"index": 0, "score": math.inf}, {"index": 1, "score": 0.2}]),
    ("tei", [{"index": True, "score": 1}, {"index": 1, "score": 0.2}]),
    ("tei", ["x", "y"]),
    ("cohere", [{"index": 0, "score": 0.1}, {"index": 1, "score": 0.2}]),
    ("cohere", {"results": [{"index": 0, "score": 0.1}, {"index": 1, "score": 0.2}]}),
])
def test_parse_scores_rejects_malformed_responses(protocol, data):
    with pytest.raises(MalformedRerank):
        parse_scores(protocol, data, 2)


def test_factory_builds_each_reranker(tmp_path):
    assert get_reranker(Settings(home=tmp_path)) is None  # the default is none
    assert get_reranker(Settings(home=tmp_path, reranker="lexical")).name == "lexical"
    http = get_reranker(Settings(home=tmp_path, reranker="http",
                                 reranker_url="http://127.0.0.1:1/rerank",
                                 reranker_protocol="cohere"))
    assert http.name == "http-cohere"
    http.close()


@pytest.mark.parametrize("overrides,message", [
    ({"reranker": "cross-encoder"}, "unknown reranker"),
    ({"reranker": "http"}, "CITADEL_RERANKER_URL"),
    ({"reranker": "http", "reranker_url": "http://x/rerank", "reranker_protocol": "grpc"},
     "unknown rerank protocol"),
])
def test_factory_refuses_unusable_settings_with_a_message(tmp_path, overrides, message):
    with pytest.raises(RerankerUnavailable, match=message):
        get_reranker(Settings(home=tmp_path, **overrides))


@pytest.mark.parametrize("protocol", ["tei", "cohere"])
def test_http_reranker_ranks_with_a_real_server(protocol):
    pool = ranked("Delivery is free over £50.", "Gift cards are valid for five years.",
                  "Gift cards can be used online.")
    with rerank_server() as server:
        reranker = HttpReranker(server.url, protocol=protocol, timeout_s=5)
        try:
            out = reranker.rerank("how long are gift cards valid", pool)
        finally:
            reranker.close()
        sent = server.requests[0]["body"]
    assert [r.chunk_id for r in out][0] == "d1#1"
    assert all(r.rerank_score is not None for r in out)
    texts = sent["texts"] if protocol == "tei" else sent["documents"]
    assert texts[1].endswith("Gift cards are valid for five years.")  # title + content
    assert ("top_n" in sent) == (protocol == "cohere")


@pytest.mark.parametrize("query,kind", [
    ("GARBAGE", "malformed"), ("NOTJSON", "malformed"), ("ERROR500", "error"),
    ("DROP", "error"), ("HANG", "timeout"),
])
def test_stage_degrades_on_each_server_fault(query, kind):
    pool = ranked("a b", "c d")
    with rerank_server() as server:
        reranker = HttpReranker(server.url, timeout_s=1.5)
        try:
            outcome = rerank_stage(reranker, query, pool, budget_s=0.5)
        finally:
            reranker.close()
    assert outcome.ranked == pool and not outcome.ran
    assert outcome.reason.startswith(f"rerank {kind}")


def test_stage_degrades_when_the_server_is_down():
    reranker = HttpReranker(closed_port_url(), timeout_s=2)
    outcome = rerank_stage(reranker, "q", ranked("a", "b"), budget_s=2)
    reranker.close()
    assert outcome.ranked == ranked("a", "b") and not outcome.ran
    assert outcome.reason.startswith("rerank error") and "Connect" in outcome.reason


def test_stage_enforces_the_budget_on_any_reranker():
    import threading

    release = threading.Event()

    class Slow(LexicalReranker):
        def score(self, question, candidates):
            release.wait(10)
            return super().score(question, candidates)

    pool = ranked("a", "b")
    outcome = rerank_stage(Slow(), "a", pool, budget_s=0.1)
    release.set()
    assert outcome.ranked == pool and outcome.reason.startswith("rerank timeout")


def test_stage_rejects_a_result_that_alters_or_drops_chunks():
    pool = ranked("a b", "c d")

    class Forger(LexicalReranker):
        def rerank(self, question, candidates):
            forged = candidates[0].chunk.model_copy(update={"content": "forged"})
            return [candidates[0].model_copy(update={"chunk": forged, "rerank_score": 1.0}),
                    candidates[1].model_copy(update={"rerank_score": 0.5})]

    class Dropper(LexicalReranker):
        def rerank(self, question, candidates):
            return super().rerank(question, candidates)[:1]

    for bad, why in ((Forger(), "altered"), (Dropper(), "1 candidates returned for 2")):
        outcome = rerank_stage(bad, "a", pool, budget_s=5)
        assert outcome.ranked == pool and not outcome.ran
        assert outcome.reason.startswith("rerank malformed") and why in outcome.reason
