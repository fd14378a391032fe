"""The reranker interface: reorder a request's fused candidates, adding `rerank_score`.

A reranker sees the candidates of one request and returns the same candidates, best first,
each with `rerank_score` set. It never adds, drops or alters a chunk: the engine checks that
and treats anything else as a malformed result (the request degrades to the fused order).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence

from citadel.records import Chunk, RankedChunk


class RerankError(RuntimeError):
    """The reranker could not produce a usable ranking (server down, bad response...)."""


class MalformedRerank(RerankError):
    """The reranker answered, but not with one finite score per candidate."""


class RerankTimeout(RerankError):
    """The reranker did not answer in time."""


class RerankerUnavailable(RuntimeError):
    """The reranker cannot be built: unknown name, missing URL, missing optional package."""


def passage_text(chunk: Chunk) -> str:
    """What a reranker reads: the chunk with its title and section, as the indexes see it."""
    same = chunk.section in ("", chunk.title)
    heading = chunk.title if same else f"{chunk.title} — {chunk.section}"
    return f"{heading}\n{chunk.content}"


def apply_scores(ranked: Sequence[RankedChunk], scores: Sequence[float]) -> list[RankedChunk]:
    """Attach one score per candidate (same order) and sort best first.

    Ties keep the fused order; `rank` stays the fused rank, so both orders stay visible.
    """
    if len(scores) != len(ranked):
        raise MalformedRerank(f"{len(scores)} scores for {len(ranked)} candidates")
    bad = [s for s in scores if not isinstance(s, int | float) or isinstance(s, bool)
           or not math.isfinite(s)]
    if bad:
        raise MalformedRerank(f"non-numeric or non-finite scores: {bad[:3]!r}")
    scored = [r.model_copy(update={"rerank_score": round(float(s), 6)})
              for r, s in zip(ranked, scores, strict=True)]
    order = sorted(range(len(scored)), key=lambda i: (-scored[i].rerank_score, i))  # type: ignore[operator]
    return [scored[i] for i in order]


class Reranker(ABC):
    """One small method to implement: `score`. Instances are shared by concurrent requests,
    so they must hold no request state."""

    name: str

    @abstractmethod
    def score(self, question: str, ranked: Sequence[RankedChunk]) -> list[float]:
        """One relevance score per candidate, in the candidates' order. Raises RerankError."""

    def rerank(self, question: str, ranked: Sequence[RankedChunk]) -> list[RankedChunk]:
        if not ranked:
            return []
        return apply_scores(ranked, self.score(question, ranked))

    def close(self) -> None:  # noqa: B027 - optional hook
        pass
