"""Metric functions on hand-built cases whose answers are known."""

import datetime as dt
import math

import pytest

from citadel.evaluation.claims import LexicalClaimScorer
from citadel.evaluation.metrics import (
    CitedSentence,
    cited_sentences,
    document_ranking,
    fact_present,
    integrity_failure,
    missing_facts,
    ndcg_at_k,
    quote_failure,
    recall_at_k,
    reciprocal_rank,
)
from citadel.evaluation.scoring import score_answer
from citadel.evaluation.tally import RunTally, Tally
from tests.eval_cases import FORUM_CHUNK, REFUNDS_CHUNK, SNAPSHOT, Lookup, answer, cite

RETURNS = "Returns are accepted within 30 days of delivery"
REFUNDS = "Refunds are paid within 5 business days"


def test_recall_at_k_is_share_of_gold_in_top_k():
    ranked = ["a", "g1", "b", "c", "g2"]
    assert recall_at_k(ranked, ["g1", "g2"], 2) == 0.5
    assert recall_at_k(ranked, ["g1", "g2"], 5) == 1.0
    assert recall_at_k(ranked, ["zz"], 5) == 0.0
    with pytest.raises(ValueError):
        recall_at_k(ranked, [], 5)


def test_ndcg_at_10_matches_hand_computation():
    ranked = ["x", "g1", "y", "g2"]
    expected = (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3))
    assert ndcg_at_k(ranked, {"g1", "g2"}, 10) == pytest.approx(expected)
    assert ndcg_at_k(["g1", "g2"], {"g1", "g2"}, 10) == pytest.approx(1.0)
    assert ndcg_at_k(["x"] * 10 + ["g1"], {"g1"}, 10) == 0.0  # rank 11 is past the cut


def test_mrr_is_reciprocal_rank_of_first_hit_within_k():
    assert reciprocal_rank(["x", "y", "g"], {"g"}) == pytest.approx(1 / 3)
    assert reciprocal_rank(["g", "g2"], {"g2", "g"}) == 1.0
    assert reciprocal_rank(["x"] * 10 + ["g"], {"g"}, 10) == 0.0


def test_document_ranking_keeps_each_document_at_its_best_chunk():
    chunks = ["b#2", "a#1", "b#1", "c#3", "a#4"]
    assert document_ranking(chunks, {}) == ["b", "a", "c"]
    assert document_ranking(["x"], {"x": "doc-x"}) == ["doc-x"]


def test_sound_citation_passes_integrity_and_quote_checks():
    c = cite(REFUNDS_CHUNK, RETURNS)
    retrieved = [REFUNDS_CHUNK.chunk_id]
    labels = {"S1": REFUNDS_CHUNK.chunk_id}
    assert integrity_failure(c, retrieved, labels, REFUNDS_CHUNK, SNAPSHOT) is None
    assert quote_failure(c, REFUNDS_CHUNK, Lookup().get_document("refunds-policy")) is None


def test_fabricated_citation_counts_as_integrity_failure():
    # A citation to a chunk that was never retrieved nor in context for this request.
    forged = cite(FORUM_CHUNK, "You can return anything within 90 days", label="S3")
    reason = integrity_failure(forged, [REFUNDS_CHUNK.chunk_id], {"S1": REFUNDS_CHUNK.chunk_id},
                               FORUM_CHUNK, SNAPSHOT)
    assert reason is not None and "not in the request's context" in reason
    relabelled = cite(FORUM_CHUNK, "You can return anything within 90 days", label="S1")
    reason = integrity_failure(relabelled, [REFUNDS_CHUNK.chunk_id],
                               {"S1": FORUM_CHUNK.chunk_id}, FORUM_CHUNK, SNAPSHOT)
    assert reason is not None and "not retrieved" in reason
    # And the aggregate: one forged citation among two makes integrity 1/2.
    a = answer(f"{RETURNS}. [S1] You can return anything within 90 days. [S3]",
               (cite(REFUNDS_CHUNK, RETURNS), forged))
    checks = score_answer(a, Lookup(), LexicalClaimScorer()).citations
    assert [c.integrity_failure is None for c in checks] == [True, False]


@pytest.mark.parametrize("change, expected", [
    ({"source": "elsewhere.md"}, "source"),
    ({"title": ""}, "title"),
    ({"content_sha256": "0" * 64}, "content hash"),
    ({"snapshot_id": "kb-other"}, "snapshot"),
    ({"chunk_id": "refunds-policy#99"}, "not in the request's context"),
])
def test_citation_with_altered_source_metadata_fails_integrity(change, expected):
    c = cite(REFUNDS_CHUNK, RETURNS, **change)
    stored = REFUNDS_CHUNK if "chunk_id" not in change else None
    reason = integrity_failure(c, [REFUNDS_CHUNK.chunk_id], {"S1": REFUNDS_CHUNK.chunk_id},
                               stored, SNAPSHOT)
    assert reason is not None and expected in reason


def test_quote_not_in_chunk_or_misplaced_offsets_is_invalid():
    doc = Lookup().get_document("refunds-policy")
    changed_number = cite(REFUNDS_CHUNK, RETURNS).model_copy(
        update={"quote": "Returns are accepted within 14 days"})
    assert "not found" in quote_failure(changed_number, REFUNDS_CHUNK, doc)
    shifted = cite(REFUNDS_CHUNK, RETURNS)
    shifted = shifted.model_copy(update={"start": shifted.start + 4, "end": shifted.end + 4})
    assert "offsets" in quote_failure(shifted, REFUNDS_CHUNK, doc)
    # Case, whitespace and punctuation do not matter; the cited words do.
    tolerant = cite(REFUNDS_CHUNK, RETURNS).model_copy(
        update={"quote": "returns are  accepted within 30 days, of delivery"})
    assert quote_failure(tolerant, REFUNDS_CHUNK, doc) is None


def test_cited_sentences_attach_labels_to_the_sentence_they_follow():
    text = "First claim here today. Second claim is cited [S1] Third one [S2][S3] Tail words here."
    assert cited_sentences(text) == [
        CitedSentence("First claim here today.", ()),
        CitedSentence("Second claim is cited", ("S1",)),
        CitedSentence("Third one", ("S2", "S3")),
        CitedSentence("Tail words here.", ()),
    ]


def test_uncited_factual_sentence_lowers_completeness():
    cited_only = answer(f"{RETURNS}. [S1]", (cite(REFUNDS_CHUNK, RETURNS),))
    score = score_answer(cited_only, Lookup(), LexicalClaimScorer())
    assert (score.supported_sentences, score.factual_sentences) == (1, 1)
    with_uncited = answer(f"{RETURNS}. [S1] Refunds are paid within 5 business days.",
                          (cite(REFUNDS_CHUNK, RETURNS),))
    score = score_answer(with_uncited, Lookup(), LexicalClaimScorer())
    assert (score.supported_sentences, score.factual_sentences) == (1, 2)
    assert score.unsupported == ("Refunds are paid within 5 business days.",)


def test_citation_whose_quote_does_not_support_its_sentence_fails_claim_support():
    # The sentence says 14 days; the quote it cites says 30 days.
    a = answer("Returns are accepted within 14 days of delivery. [S1]",
               (cite(REFUNDS_CHUNK, RETURNS),))
    score = score_answer(a, Lookup(), LexicalClaimScorer())
    assert not score.citations[0].supported
    assert score.supported_sentences == 0 and score.factual_sentences == 1


def test_abstention_has_no_factual_sentences():
    a = answer('I couldn\'t find an answer to "x y z" in the knowledge base.', abstained=True)
    score = score_answer(a, Lookup(), LexicalClaimScorer())
    assert score.factual_sentences == 0 and score.citations == ()


def test_key_facts_match_tolerantly_but_never_a_different_number():
    assert fact_present("Delivery takes 3–5 business days.", "3-5 business days")
    assert fact_present("It costs £9.95.", "9.95")
    assert not fact_present("within 130 days", "30 days")
    assert not fact_present("within 14 days", "30 days")
    assert fact_present("within 30 days", ["thirty days", "30 days"])
    assert missing_facts("Leeds, not Utrecht", ["Leeds", "Rotterdam"]) == ["Rotterdam"]


def test_tally_reports_none_when_nothing_was_measured():
    assert Tally().value is None
    t = RunTally()
    t.add("poison_pass_rate", True)
    t.add("poison_pass_rate", False, "case-2: failed")
    assert t.metrics() == {"poison_pass_rate": 0.5}
    assert t.counts() == {"poison_pass_rate": {"sum": 1.0, "n": 2}}
    assert t.failures == {"poison_pass_rate": ["case-2: failed"]}


def test_sentence_attributing_a_quote_to_its_source_is_judged_on_its_real_metadata():
    stored = REFUNDS_CHUNK.model_copy(update={"authority": 1.0,
                                              "effective_date": dt.date(2026, 3, 1)})
    lookup = Lookup(chunks=(stored, FORUM_CHUNK))
    true_meta = answer(f"Refunds-Policy (authority 1.0, effective 2026-03-01) says: {RETURNS}. "
                       "[S1]", (cite(stored, RETURNS),))
    assert score_answer(true_meta, lookup, LexicalClaimScorer()).citations[0].supported
    false_meta = answer(f"Refunds-Policy (authority 0.9, effective 2024-01-01) says: {RETURNS}. "
                        "[S1]", (cite(stored, RETURNS),))
    assert not score_answer(false_meta, lookup, LexicalClaimScorer()).citations[0].supported
