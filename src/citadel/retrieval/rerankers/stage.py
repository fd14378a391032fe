"""The rerank stage: run a reranker within a time budget and accept only a valid result.

Any failure (exception, budget exceeded, a result that is not the same candidates with finite
scores) returns the fused ranking unchanged with the reason: reranking may cost quality, never
integrity or availability.
"""

from __future__ import annotations

import contextvars
import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from citadel.records import RankedChunk
from citadel.retrieval.rerankers.base import MalformedRerank, Reranker, RerankTimeout

T = TypeVar("T")


class BudgetExceeded(TimeoutError):
    pass


@dataclass(frozen=True)
class RerankOutcome:
    ranked: list[RankedChunk]
    ran: bool
    reason: str | None = None  # set when the stage degraded

    @property
    def degraded(self) -> bool:
        return self.reason is not None


def call_within(budget_s: float, fn: Callable[..., T], *args: Any) -> T:
    """Run fn(*args) in its own daemon thread; give up waiting after `budget_s`.

    A thread per call (not a shared pool): a call that hangs past its budget keeps only its
    own thread busy, so it can never delay another request's call.
    """
    box: dict[str, Any] = {}
    ctx = contextvars.copy_context()

    def target() -> None:
        try:
            box["value"] = ctx.run(fn, *args)
        except BaseException as exc:  # handed to the caller below
            box["error"] = exc

    worker = threading.Thread(target=target, name="citadel-rerank", daemon=True)
    worker.start()
    worker.join(budget_s)
    if worker.is_alive():
        raise BudgetExceeded(f"no result within {budget_s * 1000:.0f} ms")
    if "error" in box:
        raise box["error"]
    return box["value"]


def check_result(before: Sequence[RankedChunk], after: object) -> str | None:
    """Why `after` is not a valid reranking of `before`, or None when it is."""
    if not isinstance(after, list) or not all(isinstance(r, RankedChunk) for r in after):
        return "not a list of ranked chunks"
    if len(after) != len(before):
        return f"{len(after)} candidates returned for {len(before)}"
    originals = {r.chunk_id: r.chunk for r in before}
    seen: set[str] = set()
    for r in after:
        if r.chunk_id not in originals or r.chunk_id in seen:
            return f"candidate {r.chunk_id} unknown or repeated"
        if r.chunk != originals[r.chunk_id]:
            return f"chunk {r.chunk_id} was altered"
        if r.rerank_score is None or not math.isfinite(r.rerank_score):
            return f"candidate {r.chunk_id} has no finite rerank score"
        seen.add(r.chunk_id)
    return None


def rerank_stage(
    reranker: Reranker | None, question: str, ranked: list[RankedChunk], budget_s: float
) -> RerankOutcome:
    if reranker is None or not ranked:
        return RerankOutcome(ranked, ran=False)
    try:
        result = call_within(budget_s, reranker.rerank, question, list(ranked))
    except (BudgetExceeded, RerankTimeout) as exc:
        return RerankOutcome(ranked, ran=False, reason=f"rerank timeout: {exc}")
    except MalformedRerank as exc:
        return RerankOutcome(ranked, ran=False, reason=f"rerank malformed: {str(exc)[:300]}")
    except Exception as exc:
        return RerankOutcome(ranked, ran=False, reason=f"rerank error: {type(exc).__name__}: "
                             f"{str(exc)[:300]}")
    problem = check_result(ranked, result)
    if problem is not None:
        return RerankOutcome(ranked, ran=False, reason=f"rerank malformed: {problem}")
    return RerankOutcome(result, ran=True)
