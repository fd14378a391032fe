"""Weighted fusion: a convex combination of min-max normalised scores, ties broken by row."""

import pytest

from citadel.retrieval.fusion import Fused, reciprocal_rank_fusion, weighted_fusion


def test_fusion_combines_normalised_scores_and_keeps_each_raw_score():
    dense = {1: 0.9, 2: 0.5, 3: 0.1}
    lexical = {2: 12.0, 4: 4.0}
    fused = weighted_fusion(dense, lexical, 0.5, 10)
    assert [f.row for f in fused] == [2, 1, 3, 4]
    by_row = {f.row: f for f in fused}
    assert by_row[2].score == pytest.approx(0.5 * 0.5 + 0.5 * 1.0)
    assert by_row[1] == Fused(row=1, score=0.5, dense=0.9, lexical=None)
    assert by_row[4].dense is None and by_row[4].score == 0.0  # the bottom of its only pool
    assert by_row[3].score == 0.0


def test_fusion_breaks_ties_on_row_and_cuts_at_k():
    fused = weighted_fusion({5: 1.0, 3: 1.0, 9: 1.0}, {}, 1.0, 2)
    assert [(f.row, f.score) for f in fused] == [(3, 1.0), (5, 1.0)]


def test_fusion_of_nothing_is_empty():
    assert weighted_fusion({}, {}, 0.5, 8) == []


def test_a_constant_added_to_every_lexical_score_changes_nothing():
    dense, lexical = {1: 0.2, 2: 0.8}, {1: 3.0, 3: 1.5}
    shifted = {r: s + 1.0 for r, s in lexical.items()}
    assert ([(f.row, f.score) for f in weighted_fusion(dense, lexical, 0.3, 5)]
            == [(f.row, f.score) for f in weighted_fusion(dense, shifted, 0.3, 5)])


def test_reciprocal_rank_fusion_sums_reciprocal_ranks():
    assert reciprocal_rank_fusion([[1, 2], [2, 3]], 2) == [(2, 1 / 62 + 1 / 61), (1, 1 / 61)]
