"""The lexical claim-support scorer and its calibration."""

import pytest

from citadel.evaluation.calibration import Pair, accuracy_at, best_threshold, calibrate
from citadel.evaluation.claims import ClaimSupportScorer, LexicalClaimScorer, supports

QUOTE = "Returns are accepted within 30 days of delivery."
SCORER = LexicalClaimScorer()


def test_a_quote_supports_itself_and_a_close_paraphrase():
    assert SCORER.score(QUOTE, QUOTE) == 1.0
    assert supports(SCORER, "You can return items within 30 days of delivery.", QUOTE)


def test_a_different_number_is_never_supported():
    explained = SCORER.explain("Returns are accepted within 14 days of delivery.", QUOTE)
    assert explained.score == 0.0 and explained.penalties == ("number: 14",)
    assert not supports(SCORER, "Returns are accepted within 130 days.", QUOTE)


def test_negation_mismatch_fails_a_fully_covered_claim():
    claim = "Returns are not accepted within 30 days of delivery."
    assert SCORER.explain(claim, QUOTE).penalties == ("negation differs",)
    assert not supports(SCORER, claim, QUOTE)
    both_negated = "Personalised items are not refundable."
    assert supports(SCORER, both_negated, "Personalised items are not refundable.")


def test_opposite_direction_fails():
    claim = "Statin use increases the risk of hip fracture."
    evidence = "Statin use was associated with a reduction in the risk of hip fracture."
    assert "direction" in SCORER.explain(claim, evidence).penalties[0]
    assert not supports(SCORER, claim, evidence)


def test_unrelated_evidence_scores_low_and_missing_terms_are_listed():
    explained = SCORER.explain("Gift cards are valid for 24 months.", QUOTE)
    assert explained.score < SCORER.threshold
    assert "gift" in explained.missing_terms


def test_entities_count_toward_coverage():
    with_entity = SCORER.explain("Express parcels are delivered by DPD.",
                                 "UK express parcels are delivered by DPD.")
    assert with_entity.entity_coverage == 1.0 and with_entity.score == 1.0
    wrong_entity = SCORER.explain("Express parcels are delivered by DHL.",
                                  "UK express parcels are delivered by DPD.")
    assert wrong_entity.entity_coverage == 0.0 and wrong_entity.score < with_entity.score


def test_scorer_is_pluggable():
    class Always:
        name = "always"
        threshold = 0.5

        def score(self, claim: str, evidence: str) -> float:
            return 1.0

    assert isinstance(Always(), ClaimSupportScorer)
    assert isinstance(SCORER, ClaimSupportScorer)


def test_accuracy_and_threshold_choice_on_known_scores():
    scored = [(0.9, True), (0.8, True), (0.4, True), (0.5, False), (0.1, False), (0.2, False)]
    result = accuracy_at(scored, 0.45)
    assert result.accuracy == pytest.approx(4 / 6)
    assert result.balanced_accuracy == pytest.approx((2 / 3 + 2 / 3) / 2)
    assert result.majority_baseline == 0.5
    assert best_threshold(scored) == 0.4  # 3/3 positives, 2/3 negatives: the best split
    assert accuracy_at(scored, 0.4).balanced_accuracy == pytest.approx((1 + 2 / 3) / 2)


def test_calibrate_chooses_on_even_claims_and_reports_odd_ones():
    pairs = [Pair(str(i // 2), "refunds take 5 business days", ev, sup) for i, (ev, sup) in
             enumerate([("Refunds are paid within 5 business days.", True),
                        ("Gift cards are valid for 24 months.", False)] * 4)]
    result = calibrate(SCORER, pairs)
    assert result["calibration_half"]["n_positive"] == 2  # claims 0 and 2
    assert result["held_out_at_calibrated_threshold"]["n_negative"] == 2  # claims 1 and 3
    assert result["held_out_at_calibrated_threshold"]["accuracy"] == 1.0


def test_reader_claim_scorer_prefers_the_supporting_quote_and_reports_its_agreement():
    from citadel.evaluation.claims import ReaderClaimScorer

    scorer = ReaderClaimScorer()
    claim = "Gift cards are valid for 24 months."
    support = scorer.score(claim, "Gift cards are valid for 24 months from the date of purchase.")
    other = scorer.score(claim, "Standard delivery takes three to five working days.")
    assert support > other
    assert scorer.name.startswith("reader:")
    agreement = scorer.agreement()  # measured on SciFact's held-out claims, from the card
    assert {"support_vs_contradict_auc", "support_vs_other_auc"} <= set(agreement)
