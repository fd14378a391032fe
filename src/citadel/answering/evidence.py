"""Evidence: what one request reads before anything is decided.

Retrieve the top k (a deeper pool when a reranker chooses), rerank, add stand-ins for
superseded sections, keep only what the request may see, build the labelled context, and
judge its sentences. Every failure to search is a `RetrievalError`: the decision turns it
into an honest abstention, never a crash.
"""

from __future__ import annotations

import dataclasses
import logging

from citadel.answering.context import build_context
from citadel.answering.judgement import MODEL_SENTENCES, Judge, for_trace
from citadel.answering.request_trace import RequestTrace
from citadel.answering.supersession import add_successor_sections
from citadel.config import Settings
from citadel.records import Context, RankedChunk
from citadel.retrieval.backends import RetrievalError, SearchIndex, SearchResult
from citadel.retrieval.embedders import Embedder
from citadel.retrieval.rerankers import Reranker
from citadel.retrieval.rerankers.stage import rerank_stage
from citadel.retrieval.tenancy import request_tenant, visible

_log = logging.getLogger("citadel.engine")


@dataclasses.dataclass(frozen=True)
class Evidence:
    """The read-only collaborators of the evidence stages (shared by concurrent requests)."""

    settings: Settings
    index: SearchIndex
    embedder: Embedder
    reranker: Reranker | None
    judge: Judge

    def search(self, question: str, top_k: int | None, tenant: str | None,
               category: str | None) -> SearchResult:
        k = top_k or self.settings.top_k
        tenant = request_tenant(tenant)
        try:
            vector = self.embedder.embed_query(question)
            result = self.index.search_result(question, vector, k, tenant=tenant,
                                              category=category)
        except RetrievalError:
            raise
        except Exception as exc:  # any backend fault is a retrieval failure, never a crash
            raise RetrievalError(f"{type(exc).__name__}: {exc}") from exc
        return dataclasses.replace(result, ranked=visible_only(result.ranked, tenant))

    def with_successors(self, ranked: list[RankedChunk], tenant: str | None
                        ) -> list[RankedChunk]:
        try:
            ranked = add_successor_sections(ranked, self.index.chunks_of)
        except RetrievalError:
            raise
        except Exception as exc:
            raise RetrievalError(f"{type(exc).__name__}: {exc}") from exc
        # Stand-ins are looked up by document, not retrieved through the backend's filter.
        return visible_only(ranked, request_tenant(tenant))

    def retrieve(self, question: str, top_k: int | None, tenant: str | None,
                 category: str | None, trace: RequestTrace) -> list[RankedChunk]:
        """The request's best k, reranked when a reranker is configured, with stand-ins."""
        k = top_k or self.settings.top_k
        # A reranker gets a deeper pool to choose from; the request keeps its best k.
        depth = max(k, self.settings.rerank_depth) if self.reranker is not None else k
        with trace.stage("retrieve"):
            retrieved = self.search(question, depth, tenant, category)
        ranked = retrieved.ranked
        if self.reranker is not None:
            with trace.stage("rerank"):
                outcome = rerank_stage(self.reranker, question, ranked,
                                       self.settings.rerank_timeout_ms / 1000)
            trace.fields["rerank_ran"] = outcome.ran
            if outcome.reason is not None:
                trace.degrade(outcome.reason)  # the fused order stands, unchanged
            ranked = outcome.ranked
        ranked = self.with_successors(ranked[:k], tenant)
        trace.fields.update(retrieved=tuple(r.chunk_id for r in ranked),
                            malformed_skipped=retrieved.malformed_skipped)
        return ranked

    def context(self, question: str, ranked: list[RankedChunk], trace: RequestTrace,
                model_decides: bool) -> Context:
        """The labelled context, judged (a model may cite any sentence: more are read)."""
        s = self.settings
        with trace.stage("build_context"):
            context = build_context(ranked, s.max_context, authority_weight=s.authority_weight,
                                    freshness_weight=s.freshness_weight,
                                    max_per_document=s.max_per_document)
        trace.fields.update(
            context_labels=context.labels, citations_available=bool(context.blocks),
            context_dropped=context.dropped, context_notes=context.notes,
            context_weights={"authority_weight": s.authority_weight,
                             "freshness_weight": s.freshness_weight,
                             "conflict_authority_gap": s.conflict_authority_gap},
        )
        if not context.blocks:
            return context
        with trace.stage("judge"):
            judgement = self.judge.judge(question, context,
                                         read=MODEL_SENTENCES if model_decides else None)
        trace.fields["judgement"] = for_trace(judgement)
        return context.model_copy(update={"judgement": judgement})


def visible_only(ranked: list[RankedChunk], tenant: str | None) -> list[RankedChunk]:
    """Defence in depth behind the backends' own tenant filters: a chunk the request may not
    see never reaches the context, whatever a backend (or a stale index) returned."""
    kept = [r for r in ranked if visible(r.chunk.tenant, tenant)]
    if len(kept) < len(ranked):
        _log.error("dropped %d retrieved chunk(s) of a tenant the request did not name",
                   len(ranked) - len(kept))
    return kept
