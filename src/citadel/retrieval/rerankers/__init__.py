"""Rerankers: one small base, one module per implementation, chosen by CITADEL_RERANKER."""

from __future__ import annotations

import os

from citadel.config import Settings
from citadel.retrieval.rerankers.base import Reranker, RerankError, RerankerUnavailable

NAMES = ("none", "lexical", "http")


def get_reranker(settings: Settings) -> Reranker | None:
    """The configured reranker, or None for `none`. Raises RerankerUnavailable."""
    name = settings.reranker
    if name == "none":
        return None
    if name == "lexical":
        from citadel.retrieval.rerankers.lexical import LexicalReranker

        return LexicalReranker()
    if name == "http":
        from citadel.retrieval.rerankers.http import HttpReranker

        # Slightly past the stage budget: the engine's budget is what a request sees.
        return HttpReranker(
            settings.reranker_url,
            protocol=settings.reranker_protocol,
            model=settings.reranker_model,
            timeout_s=settings.rerank_timeout_ms / 1000 + 0.5,
            # A secret: read from the environment only, never from settings or the trace.
            api_key=os.environ.get("CITADEL_RERANKER_API_KEY") or None,
        )
    raise RerankerUnavailable(f"unknown reranker {name!r}: choose {', '.join(NAMES)}")


__all__ = ["NAMES", "Reranker", "RerankError", "RerankerUnavailable", "get_reranker"]
