"""A client for self-hosted `/rerank` servers (no model runs in this process).

Two wire protocols:

* ``tei`` (text-embeddings-inference): ``POST {query, texts, truncate}`` ->
  ``[{"index": i, "score": s}, ...]``
* ``cohere`` (also Jina, and servers that copy them): ``POST {query, documents, top_n[,
  model]}`` -> ``{"results": [{"index": i, "relevance_score": s}, ...]}``

Every candidate must come back exactly once with a finite score; anything else is a malformed
response (`MalformedRerank`) and the engine keeps the fused order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from citadel.records import RankedChunk
from citadel.retrieval.rerankers.base import (
    MalformedRerank,
    Reranker,
    RerankError,
    RerankerUnavailable,
    RerankTimeout,
    passage_text,
)

PROTOCOLS = ("tei", "cohere")


def _httpx() -> Any:
    try:
        import httpx
    except ImportError:  # pragma: no cover - depends on the environment
        raise RerankerUnavailable(
            "the http reranker needs httpx: pip install 'citadel[rerank]' (or pip install httpx)"
        ) from None
    return httpx


def request_body(protocol: str, question: str, texts: list[str], model: str = "") -> dict:
    if protocol == "tei":
        return {"query": question, "texts": texts, "truncate": True}
    body: dict[str, Any] = {"query": question, "documents": texts, "top_n": len(texts)}
    if model:
        body["model"] = model
    return body


def parse_scores(protocol: str, data: Any, n: int) -> list[float]:
    """Scores in the candidates' order, or RerankError saying what is wrong."""
    if protocol == "cohere":
        if not isinstance(data, dict) or not isinstance(data.get("results"), list):
            raise MalformedRerank("expected an object with a 'results' list")
        items, score_key = data["results"], "relevance_score"
    else:
        if not isinstance(data, list):
            raise MalformedRerank("expected a list of {index, score}")
        items, score_key = data, "score"
    scores: dict[int, float] = {}
    for item in items:
        if not isinstance(item, dict):
            raise MalformedRerank(f"item {item!r:.60} is not an object")
        index, score = item.get("index"), item.get(score_key)
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < n:
            raise MalformedRerank(f"bad index {index!r:.40} for {n} texts")
        if (not isinstance(score, int | float) or isinstance(score, bool)
                or not math.isfinite(score)):
            raise MalformedRerank(f"bad {score_key} {score!r:.40}")
        if index in scores:
            raise MalformedRerank(f"index {index} repeated")
        scores[index] = float(score)
    if len(scores) != n:
        raise MalformedRerank(f"{len(scores)} of {n} texts scored")
    return [scores[i] for i in range(n)]


class HttpReranker(Reranker):
    name = "http"

    def __init__(
        self,
        url: str,
        *,
        protocol: str = "tei",
        model: str = "",
        timeout_s: float = 2.0,
        api_key: str | None = None,
    ) -> None:
        if not url.startswith(("http://", "https://")):
            raise RerankerUnavailable(
                f"the http reranker needs CITADEL_RERANKER_URL (http://host:port/rerank), "
                f"got {url!r}")
        if protocol not in PROTOCOLS:
            raise RerankerUnavailable(
                f"unknown rerank protocol {protocol!r}: choose {' or '.join(PROTOCOLS)}")
        httpx = _httpx()
        self.url, self.protocol, self.model = url, protocol, model
        self.name = f"http-{protocol}"
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        # One pooled client shared by concurrent requests (httpx clients are thread-safe).
        # No connection cap: a hung request must not make a healthy one wait for a slot.
        self._client = httpx.Client(
            timeout=httpx.Timeout(timeout_s), headers=headers,
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=32),
        )
        self._httpx = httpx

    def score(self, question: str, ranked: Sequence[RankedChunk]) -> list[float]:
        texts = [passage_text(r.chunk) for r in ranked]
        body = request_body(self.protocol, question, texts, self.model)
        try:
            response = self._client.post(self.url, json=body)
        except self._httpx.TimeoutException as exc:
            raise RerankTimeout(f"{type(exc).__name__}") from exc
        except self._httpx.HTTPError as exc:
            raise RerankError(f"{type(exc).__name__}: {exc}") from exc
        if response.status_code != 200:
            raise RerankError(f"server answered HTTP {response.status_code}")
        try:
            data = response.json()
        except ValueError:
            raise MalformedRerank("not JSON") from None
        return parse_scores(self.protocol, data, len(texts))

    def close(self) -> None:
        self._client.close()
