"""Score fusion: pure functions over {row: score} maps from the dense and lexical retrievers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Fused:
    row: int
    score: float
    dense: float | None
    lexical: float | None


def _minmax(scores: Mapping[int, float]) -> dict[int, float]:
    if not scores:
        return {}
    lo, hi = min(scores.values()), max(scores.values())
    if hi - lo < 1e-12:
        return {r: 1.0 for r in scores}
    return {r: (s - lo) / (hi - lo) for r, s in scores.items()}


def weighted_fusion(
    dense: Mapping[int, float], lexical: Mapping[int, float], dense_weight: float, k: int
) -> list[Fused]:
    """Convex combination of min-max normalised scores over each retriever's own pool.

    A candidate missing from a pool gets 0 for that side: it was below the pool's cut-off.
    Ties break on row number so that the order is deterministic.
    """
    nd, nl = _minmax(dense), _minmax(lexical)
    # Rank plain (score, row) pairs; only the k kept become records (this runs per request).
    scored = sorted(
        ((dense_weight * nd.get(r, 0.0) + (1.0 - dense_weight) * nl.get(r, 0.0), r)
         for r in set(dense) | set(lexical)),
        key=lambda x: (-x[0], x[1]),
    )[:k]
    return [Fused(row=r, score=score, dense=dense.get(r), lexical=lexical.get(r))
            for score, r in scored]


def reciprocal_rank_fusion(
    rankings: list[list[int]], k: int, constant: int = 60
) -> list[tuple[int, float]]:
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, row in enumerate(ranking):
            scores[row] = scores.get(row, 0.0) + 1.0 / (constant + rank + 1)
    return sorted(scores.items(), key=lambda x: (-x[1], x[0]))[:k]
