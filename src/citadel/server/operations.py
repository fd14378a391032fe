"""What a caller may ask of the knowledge base through any door (HTTP, MCP, chat completions):
answer, search, read a chunk, verify an answer. Each takes the caller's tenant, which the door
got from the caller's API key, and sees what a request of that tenant sees on `/v1/answer`.

The methods block (retrieval, scoring, SQLite): doors call them from a worker thread. Each
runs in one of the provider's answer slots, as `/v1/answer` does, so no door can crowd out
the others.

Every answer is recorded in the request log with the tenant it was asked for (the engine
logs it), and `verify` compares a caller's answer only with that tenant's requests: a
request id of another tenant is as unknown as a made-up one.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from typing import Any

from citadel.answering.streaming import StreamEvent
from citadel.engine import Engine
from citadel.knowledge.receipts import Signer
from citadel.knowledge.signing import KeyStore
from citadel.knowledge.verify import VerifyReport, parse_answer, server_origins, verify_answer
from citadel.observability.request_log import WITHHELD
from citadel.records import Answer, Turn
from citadel.retrieval.tenancy import visible
from citadel.server.models import ChunkView, SearchHit, SearchResults
from citadel.server.provider import EngineProvider

DEFAULT_SEARCH_K = 5


class NotFound(LookupError):
    """No such item in the served snapshot, or not visible with the caller's key."""


class Operations:
    """The tenant-scoped operations of one served knowledge base (an `EngineProvider`)."""

    def __init__(self, provider: EngineProvider) -> None:
        self.provider = provider
        # Signs a door's copy of an answer, its links included (`CitedAnswer.of`).
        settings = provider.settings
        self.signer = Signer(KeyStore(settings.home)) if settings.sign_answers else None

    @property
    def engine(self) -> Engine:
        return self.provider.get()  # NotReady (what to do) when nothing can be served

    def answer(self, question: str, *, tenant: str | None, history: Sequence[Turn] = (),
               top_k: int | None = None, category: str | None = None,
               request_id: str | None = None, client_request_id: str | None = None) -> Answer:
        engine = self.engine
        request_id = request_id or uuid.uuid4().hex
        return self.provider.call(engine.answer, question, history=history, top_k=top_k,
                                  tenant=tenant, category=category, request_id=request_id,
                                  client_request_id=client_request_id)

    def stream(self, question: str, *, tenant: str | None, history: Sequence[Turn] = (),
               top_k: int | None = None, category: str | None = None,
               request_id: str | None = None, client_request_id: str | None = None
               ) -> Iterator[StreamEvent]:
        """The engine's events (a bad question or history raises at once, before the first
        event); the caller advances the iterator through `provider.call`, one step per slot."""
        engine = self.engine
        request_id = request_id or uuid.uuid4().hex
        return engine.stream(question, history=history, top_k=top_k, tenant=tenant,
                             category=category, request_id=request_id,
                             client_request_id=client_request_id)

    def search(self, query: str, *, tenant: str | None, k: int | None = None,
               category: str | None = None) -> SearchResults:
        engine = self.engine
        query = engine.validate_question(query)
        ranked = self.provider.call(engine.retrieve, query, k or DEFAULT_SEARCH_K, tenant,
                                    category)
        # A flagged chunk is never handed to a model through any door (answers leave it out
        # of the context too); the count says that something was withheld.
        kept = [r for r in ranked if not r.chunk.suspicious]
        return SearchResults(
            query=query, snapshot_id=engine.index.snapshot_id, withheld=len(ranked) - len(kept),
            hits=[SearchHit(
                **r.chunk.model_dump(include={
                    "chunk_id", "document_id", "title", "source", "section", "category",
                    "content", "start", "end", "page_start", "page_end", "authority",
                    "effective_date"}),
                rank=n, score=r.retrieval_score, dense_score=r.dense_score,
                lexical_score=r.lexical_score,
            ) for n, r in enumerate(kept, start=1)],
        )

    def chunk(self, chunk_id: str, *, tenant: str | None, window: int = 0) -> ChunkView:
        engine = self.engine
        found = engine.index.get_chunk(chunk_id)
        if found is None or not visible(found.tenant, tenant):  # the same words either way
            raise NotFound(f"no chunk {chunk_id!r} in snapshot {engine.index.snapshot_id}")
        return ChunkView.of(found, engine.index.get_document(found.document_id),
                            engine.index.snapshot_id, window)

    def verify(self, answer: str | dict[str, Any], *, tenant: str | None,
               page: str) -> VerifyReport:
        """`citadel verify` for a caller: the receipts are checked as the caller's tenant
        sees the knowledge base (another tenant's chunk is "not in the snapshot"), the answer
        text against the caller's tenant's requests in the engine's request log, and the
        citations' links against this server's `page` (its address, as the door hands it
        out). Raises VerifyError on bad input."""
        saved = parse_answer(answer)
        engine = self.engine
        log = engine.request_log
        return self.provider.call(
            verify_answer, engine.settings, saved, tenant=tenant,
            records=(lambda rid: log.responses_of(rid, tenant)) if log is not None else None,
            withheld=WITHHELD, open_indexes={engine.index.snapshot_id: engine.index},
            keys=KeyStore(engine.settings.home).public_keys(),
            origins=server_origins(engine.settings.public_url or page))
