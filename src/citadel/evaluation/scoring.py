"""Score one `Answer` on the answer-side layers: citation integrity, quote validity, claim
support and citation completeness. Retrieval and correctness are scored by the suites."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from citadel.evaluation.claims import ClaimSupportScorer
from citadel.evaluation.metrics import (
    cited_sentences,
    integrity_failure,
    is_factual,
    quote_failure,
)
from citadel.records import Answer, Chunk, Citation, Document


class ChunkLookup(Protocol):
    """What scoring needs from a snapshot (a backend's `SearchIndex` provides it)."""

    def get_chunk(self, chunk_id: str) -> Chunk | None: ...

    def get_document(self, document_id: str) -> Document | None: ...


@dataclass(frozen=True)
class CitationCheck:
    label: str
    chunk_id: str
    document_id: str
    quote: str
    integrity_failure: str | None
    quote_failure: str | None
    claim: str | None  # the answer sentence that cites this citation
    support: float
    supported: bool


@dataclass(frozen=True)
class AnswerScore:
    citations: tuple[CitationCheck, ...]
    factual_sentences: int
    supported_sentences: int
    unsupported: tuple[str, ...]  # factual sentences without a supporting citation


def attribution(citation: Citation, stored: Chunk | None) -> str:
    """The source facts a citation receipt vouches for besides its quote: title, authority and
    effective date (not the section: a heading like "What Is Not Covered" is no claim)."""
    parts = [citation.title]
    if stored is not None:
        parts.append(f"authority {stored.authority}")
        if stored.effective_date is not None:
            parts.append(f"effective {stored.effective_date.isoformat()}")
    return "\n".join(parts)


def citation_support(scorer: ClaimSupportScorer, sentence: str, quote: str, source: str) -> float:
    """How well a citation supports a sentence: on its quote alone, or on its quote plus its
    source's real metadata when the sentence attributes the quote ("Refunds Policy (authority
    1.0, effective 2026-03-01) says: ..."), whichever is higher, so metadata only ever helps
    a sentence that states it."""
    return max(scorer.score(sentence, quote), scorer.score(sentence, f"{quote}\n{source}"))


def score_answer(answer: Answer, lookup: ChunkLookup, scorer: ClaimSupportScorer) -> AnswerScore:
    trace = answer.trace
    sentences = [] if answer.abstained else cited_sentences(answer.answer)
    checks: list[CitationCheck] = []
    sources: list[str] = []
    for c in answer.citations:
        stored = lookup.get_chunk(c.chunk_id)
        document = lookup.get_document(c.document_id) if stored is not None else None
        source = attribution(c, stored)
        sources.append(source)
        citing = [s.text for s in sentences if c.label in s.labels]
        scored = [(citation_support(scorer, text, c.quote, source), text) for text in citing]
        support, claim = max(scored) if scored else (0.0, None)
        checks.append(CitationCheck(
            label=c.label, chunk_id=c.chunk_id, document_id=c.document_id, quote=c.quote,
            integrity_failure=integrity_failure(c, trace.retrieved, trace.context_labels, stored,
                                                trace.snapshot_id),
            quote_failure=quote_failure(c, stored, document),
            claim=claim, support=round(support, 6), supported=support >= scorer.threshold,
        ))
    factual = [s for s in sentences if is_factual(s.text)]
    unsupported = tuple(
        s.text for s in factual
        if not any(citation_support(scorer, s.text, c.quote, source) >= scorer.threshold
                   for c, source in zip(answer.citations, sources, strict=True)
                   if c.label in s.labels)
    )
    return AnswerScore(tuple(checks), len(factual), len(factual) - len(unsupported), unsupported)
