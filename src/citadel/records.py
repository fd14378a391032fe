"""The vocabulary of Citadel: immutable typed records passed between stages.

Every stage takes and returns these records; nothing else crosses a stage boundary.
`Citation` is declared here but only the citation gate (`citadel.gate`) may build one.
"""

from __future__ import annotations

import datetime as dt
from bisect import bisect_right
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


DocumentFormat = Literal["markdown", "text", "html", "pdf", "docx"]


class Document(Record):
    """A source document after loading: its `text` is what offsets point into.

    Markdown and plain text: the file itself, as Python reads it (`open(path,
    encoding="utf-8").read()`: universal newlines, a byte-order mark kept as U+FEFF), so a
    citation's `start`/`end` index the file. What comes before `body_start` (the mark, a
    Markdown file's front matter and the blank lines after it) is counted by offsets but never
    chunked, retrieved, quoted or shown. HTML, PDF and Word: the extracted text."""

    document_id: str
    source: str = Field(description="Path relative to the ingest root, or URL.")
    title: str
    format: DocumentFormat
    text: str = Field(description="What offsets point into: for Markdown and plain text the "
                                  "file's text (universal newlines, front matter included); "
                                  "for HTML, PDF and DOCX the extracted text (for PDF: the "
                                  "page texts, concatenated).")
    content_sha256: str = Field(description="SHA-256 of `text` as UTF-8.")
    body_start: int = Field(
        default=0, ge=0, description="Offset in `text` where the document's body begins: "
        "a byte-order mark and Markdown front matter come before it (counted by offsets, "
        "never chunked or shown).")
    category: str = "general"
    authority: float = Field(default=0.5, ge=0.0, le=1.0)
    effective_date: dt.date | None = None
    supersedes: str | None = None
    tenant: str | None = None
    tags: tuple[str, ...] = Field(
        default=(), description="Markdown front matter's tags (descriptive; they decide nothing).")
    hidden_spans: tuple[tuple[int, int], ...] = Field(
        default=(), description="HTML only: spans of `text` that a browser would not show.")
    flags: tuple[str, ...] = Field(
        default=(), description="Why the whole document is suspicious (e.g. an HTML <meta> "
                                "that tries to set its own authority); every chunk of it is "
                                "flagged with these reasons.")
    # Paged formats (PDF). Page n (1-based) is text[pages[n-1]:pages[n]] (the last one runs
    # to the end); an empty page starts where the next one does.
    pages: tuple[int, ...] = Field(
        default=(), description="PDF: offset in `text` where each page begins, in order.")
    outline: tuple[tuple[int, str], ...] = Field(
        default=(), description="PDF: (offset, heading) where each outline section begins; "
                                "the headings are not marked up in `text`.")

    @model_validator(mode="after")
    def _body_inside(self) -> Document:
        if self.body_start > len(self.text):
            raise ValueError("body_start lies past the end of the text")
        return self

    @property
    def body(self) -> str:
        """The text after `body_start`: what is chunked and shown."""
        return self.text[self.body_start:]

    def page_at(self, offset: int) -> int | None:
        """The 1-based page holding text[offset], or None for a format without pages."""
        return bisect_right(self.pages, offset) if self.pages else None


class TypedSpan(Record):
    """A candidate answer inside a sentence: a named entity, a number or a noun phrase."""

    start: int = Field(description="Offset in the chunk's content (or the analysed text).")
    end: int
    kind: str = Field(description="Entity label (PERSON, GPE, DATE, ...), or NOUN for a noun "
                                  "phrase that is no entity.")
    head: str = Field(description="Lemma of the span's head word, lower case.")


class SentenceAnalysis(Record):
    """One sentence of a chunk as the language analyser saw it (computed at ingest).

    `terms`, `offsets` and `tags` run parallel: one entry per content word (not a stop word
    or punctuation; numbers always count)."""

    start: int = Field(description="Offset of the sentence in the chunk's content.")
    end: int
    terms: tuple[str, ...] = Field(description="Lemmas of the content words, lower case.")
    offsets: tuple[int, ...] = Field(description="Each content word's offset in the content.")
    tags: str = Field(description="One letter per content word: N noun, P proper noun, "
                                  "V verb, A adjective, R adverb, M number, O other.")
    spans: tuple[TypedSpan, ...] = ()
    negated: bool = False
    statement: bool = Field(default=True, description="A declarative sentence with a verb: "
                            "not a question, heading, list label or fragment.")


class ChunkAnalysis(Record):
    """The language analysis of a chunk's content, stored with it in the snapshot."""

    sentences: tuple[SentenceAnalysis, ...] = ()


class Chunk(Record):
    chunk_id: str = Field(description="Stable: same document + same chunking => same id.")
    document_id: str
    source: str
    title: str
    section: str
    category: str = "general"
    content: str
    start: int = Field(description="Offset of `content` in the document's text (`Document."
                                   "text`: the file itself for Markdown and plain text).")
    end: int
    authority: float = Field(default=0.5, ge=0.0, le=1.0)
    effective_date: dt.date | None = None
    supersedes: str | None = None
    tenant: str | None = None
    content_sha256: str
    suspicious: bool = False
    suspicious_reason: str | None = None
    retired_by: str | None = Field(
        default=None, description="The document that supersedes this chunk's document in its "
                                  "snapshot, for everyone who may see it (set at ingest: "
                                  "`citadel.supersedes.retired_documents`).")
    # Paged formats (PDF); None / () for the others.
    page_start: int | None = Field(default=None, description="Page of `start` (1-based).")
    page_end: int | None = Field(default=None, description="Page of the last character.")
    page_breaks: tuple[int, ...] = Field(
        default=(), description="Document offsets inside the chunk where a new page begins.")

    @model_validator(mode="after")
    def _pages_agree(self) -> Chunk:
        """Pages are all or nothing, and the breaks lie inside the chunk and lead from its
        first page to its last: a stored chunk cannot claim a page it does not span."""
        if self.page_start is None:
            if self.page_end is not None or self.page_breaks:
                raise ValueError("page_end or page_breaks without page_start")
        elif (self.page_start < 1
              or self.page_end != self.page_start + len(self.page_breaks)
              or list(self.page_breaks) != sorted(self.page_breaks)
              or any(not self.start < p < self.end for p in self.page_breaks)):
            raise ValueError("page_start, page_end and page_breaks disagree")
        return self

    def page_at(self, offset: int) -> int | None:
        """The page holding document offset `offset` (inside this chunk), if paged."""
        if self.page_start is None:
            return None
        return self.page_start + bisect_right(self.page_breaks, offset)

    @property
    def retrievable(self) -> bool:
        """Whether search may return it: not flagged at ingest, its document not retired.
        Every backend keeps the others out before the top k is chosen, so they never take
        the place of evidence (they stay readable by id, for receipts and the trace)."""
        return not self.suspicious and self.retired_by is None
    analysis: ChunkAnalysis | None = Field(
        default=None, description="Sentences, entities and candidate answers (ingest).")


class RankedChunk(Record):
    """A chunk plus its scores. Scores are added by stages; the chunk itself never changes."""

    chunk: Chunk
    retrieval_score: float
    dense_score: float | None = None
    lexical_score: float | None = None
    rerank_score: float | None = None
    rank: int

    @property
    def chunk_id(self) -> str:
        return self.chunk.chunk_id


class ContextBlock(Record):
    label: str = Field(description="Per-request label, S1..Sn.")
    ranked: RankedChunk

    @property
    def chunk(self) -> Chunk:
        return self.ranked.chunk


ContextDropReason = Literal["superseded", "suspicious"]


ContextNoteReason = Literal["supersession-cycle"]


class ContextNote(Record):
    """A decision of build_context that dropped nothing, and why (recorded in the trace)."""

    document_id: str
    reason: ContextNoteReason
    detail: str = ""


class ContextDrop(Record):
    """A retrieved chunk kept out of the context, and why (recorded in the trace)."""

    chunk_id: str
    document_id: str
    reason: ContextDropReason
    detail: str = ""


class QuestionAnalysis(Record):
    """What a question asks for (`citadel.answering.questions`)."""

    wh: str = Field(description="who, what, which, when, where, why, how, how many, "
                                "how much, how long, yes/no or other")
    expected: tuple[str, ...] = Field(
        default=(), description="Span kinds that answer it (PERSON, GPE, DATE, ...); empty "
                                "when the answer is no typed span (why, how, yes/no).")
    head: str | None = Field(default=None, description="The noun after which/what, if any.")
    focus: tuple[str, ...] = Field(default=(), description="What the answer must be about: "
                                   "the question's content lemmas (stemmed).")
    tags: str = Field(default="", description="One part-of-speech letter per focus word "
                                              "(as `SentenceAnalysis.tags`).")
    rarity: tuple[float, ...] = Field(default=(), description="Per focus word: how rare it is "
                                      "in English (0 common .. 1 unseen).")
    entities: tuple[str, ...] = Field(
        default=(), description="Names, numbers and dates of the question: an answering "
                                "sentence must state the same ones.")
    names: tuple[str, ...] = Field(
        default=(), description="The names the question asks about, as written (its main "
                                "clause's proper nouns, not values): sources that never "
                                "mention one cannot answer it.")
    negated: bool = False


class SentenceJudgement(Record):
    """Does one context sentence answer the question, and with which words?"""

    label: str
    chunk_id: str
    document_id: str
    start: int = Field(description="Offset of the sentence in the chunk's content.")
    end: int
    text: str = Field(description="The sentence as an answer shows it (markup removed).")
    answers: bool
    score: float = Field(description="Calibrated probability that the sentence answers.")
    span: TypedSpan | None = Field(
        default=None, description="The answer span (offsets in the chunk's content).")
    span_text: str | None = None
    answer: TypedSpan | None = Field(
        default=None, description="The reader's answer: the shortest words of the sentence "
                                  "that answer (offsets in the chunk's content).")
    answer_text: str | None = None
    reader: float | None = Field(
        default=None, description="The evidence reader's probability that the sentence "
                                  "answers (None: not read).")
    candidates: tuple[str, ...] = Field(
        default=(), description="Every typed span of the expected kinds the question does "
                                "not contain (for conflicts between sentences).")
    matched: tuple[str, ...] = Field(default=(), description="Focus words it states.")
    reasons: tuple[str, ...] = ()
    said: str | None = Field(
        default=None, description="How an answer says it when its structure needs words (a "
        "table row with its column names, a list with its introduction); `text` stays the "
        "source's own words, for the quote.")


class Judgement(Record):
    """The judgement stage's verdict on one request's context (`citadel.answering.judgement`):
    its sentences best first; `answerable` when at least one reaches the threshold."""

    question: QuestionAnalysis
    sentences: tuple[SentenceJudgement, ...] = ()
    threshold: float
    floor: float = Field(default=0.0, description="Below it everywhere, the context is "
                         "certainly irrelevant: no language model is asked.")
    check: float = Field(default=0.0, description="Least score of a sentence a language "
                         "model cites for its quote to count as answering.")
    model: str = Field(description="Version of the calibrated weights.")
    path: str = Field(default="reader", description="Who judged: `reader:<version>` (English), "
                      "or `lexical:<language>` (another language's stop words left out).")
    analysed_at_request: int = Field(
        default=0, description="Context chunks without a stored analysis, analysed now.")

    @property
    def answering(self) -> tuple[SentenceJudgement, ...]:
        return tuple(s for s in self.sentences if s.answers)

    @property
    def answerable(self) -> bool:
        return any(s.answers for s in self.sentences)

    @property
    def relevant(self) -> bool:
        """Some sentence reaches the floor: worth asking a language model."""
        return any(s.score >= self.floor for s in self.sentences)


class Context(Record):
    """The chunks handed to the generator for one request, labelled S1..Sn, with the
    judgement of their sentences once the judgement stage has run."""

    blocks: tuple[ContextBlock, ...] = ()
    dropped: tuple[ContextDrop, ...] = ()
    notes: tuple[ContextNote, ...] = ()
    judgement: Judgement | None = None

    def get(self, label: str) -> ContextBlock | None:
        for block in self.blocks:
            if block.label == label:
                return block
        return None

    @property
    def labels(self) -> dict[str, str]:
        return {b.label: b.chunk.chunk_id for b in self.blocks}


class DraftCitation(Record):
    """What a generator may say about evidence: a label it was handed and a quote."""

    label: str
    quote: str


class DraftSentence(Record):
    text: str
    citations: tuple[DraftCitation, ...] = ()


class DraftSpan(Record):
    """A generator's claim that these exact words of a block answer the question."""

    label: str
    text: str
    kind: str = "NOUN"


class Draft(Record):
    """A generator's output before the gate. It holds labels and quotes, never sources."""

    sentences: tuple[DraftSentence, ...] = ()
    abstain: bool = False
    missing: str | None = None
    confidence: float | None = None
    generator: str
    prompt_version: str
    failure: str | None = Field(
        default=None, description="Why the generator's output was unusable (e.g. not JSON)."
    )
    unattached: tuple[DraftCitation, ...] = Field(
        default=(), description="Citations the generator gave that no sentence refers to."
    )
    span: DraftSpan | None = Field(
        default=None, description="The answer's exact words; the gate verifies them.")
    relabelled: int = Field(
        default=0, description="Citations pointed at the one block holding their quote "
                               "(answering.generators.relabel).")


class Citation(Record):
    """A verified citation receipt. Built only by `citadel.gate.gate`."""

    label: str
    chunk_id: str
    document_id: str
    source: str
    title: str
    section: str
    quote: str = Field(description="The quote as it appears in the source text.")
    start: int = Field(description="Quote's offset in the source document's text: for "
                       "Markdown and plain text the file as Python reads it (universal "
                       "newlines, front matter included), for HTML, PDF and Word the extracted "
                       "text. Counts code points.")
    end: int
    snapshot_id: str
    content_sha256: str = Field(description="SHA-256 of the cited chunk's content.")
    page_start: int | None = Field(default=None, description="Paged formats: the quote's "
                                                             "first page (1-based).")
    page_end: int | None = Field(default=None, description="Paged formats: its last page.")


DropReason = Literal[
    "label_not_in_context",
    "missing_source_metadata",
    "content_hash_mismatch",
    "empty_quote",
    "quote_not_found",
    "duplicate",
    "uncited_sentence",
    "unattached",
]


class DroppedCitation(Record):
    label: str | None
    quote: str
    reason: DropReason
    detail: str = ""


class RetryFeedback(Record):
    """Why a gated draft was not accepted, handed back to a generator that may try again."""

    reasons: tuple[str, ...] = Field(description="Short codes, e.g. uncited_sentence.")
    problems: tuple[str, ...] = Field(description="One plain sentence per problem found.")


class GenerationAttempt(Record):
    """One generate-then-gate round of a request, as recorded in its trace."""

    prompt_version: str
    citations_attempted: int = 0
    citations_verified: int = 0
    dropped: dict[str, int] = Field(default_factory=dict, description="Drops by reason.")
    abstained: bool = False
    problem: str | None = Field(default=None, description="Why it was not accepted, if not.")
    relabelled: int = Field(default=0, description="Citations pointed at the one block "
                                                   "holding their quote.")


class ConflictSide(Record):
    """One document's value for the disputed attribute, with the sentence that states it."""

    label: str
    chunk_id: str
    document_id: str
    title: str
    value: str
    quote: str
    authority: float
    effective_date: dt.date | None = None


class Conflict(Record):
    """Context chunks disagree on one attribute. `values` and `chunk_ids` run parallel to
    `sides`. resolution "flagged": the answer presents every side; "authoritative": one side
    outranks the others by the configured authority gap and the answer follows it."""

    attribute: str
    values: tuple[str, ...]
    chunk_ids: tuple[str, ...]
    preferred_chunk_id: str | None = None
    explanation: str = ""
    resolution: Literal["flagged", "authoritative"] = "flagged"
    sides: tuple[ConflictSide, ...] = ()


class SourceRef(Record):
    chunk_id: str
    title: str
    source: str
    section: str = ""


class Verdict(Record):
    """Why an answer is what it is: the decision's outcome, the stage that decided it, a
    reason from a closed list (`citadel.answering.decision.verdict.REASONS`), the scores and
    thresholds it compared, and conflicts a detector found that could not be composed."""

    outcome: Literal["answered", "abstained", "conflict"]
    stage: str = Field(description="The decision stage that decided (retrieval, context, "
                                   "conflicts, relevance, attempts, conflicts_after, release).")
    reason: str = Field(description="A code from the documented list, e.g. `nothing_answers`, "
                                    "`review_refused:non_answering_quote`, `conflict:values`.")
    scores: dict[str, float] = Field(default_factory=dict, description="What was measured "
                                     "(e.g. the best sentence's score).")
    thresholds: dict[str, float] = Field(default_factory=dict, description="What it was "
                                         "compared with (e.g. the judgement's threshold).")
    conflicts_not_composed: tuple[Conflict, ...] = Field(
        default=(), description="Disagreements found whose answer the gate could not keep.")
    explanation: str = Field(default="", description="All of the above in words.")


class Trace(Record):
    """How one request was answered. Built per request, never shared between requests."""

    request_id: str = Field(description="The server's id for this request: unique.")
    client_request_id: str | None = Field(
        default=None, description="The id the client sent (`X-Client-Request-ID` or "
        "`X-Request-ID`), if any: the client's to choose, so not unique.")
    question_sha256: str = ""
    backend: str = ""
    strategy: str = ""
    snapshot_id: str = ""
    retrieval_ok: bool = True
    reranker: str = ""
    rerank_ran: bool = False
    degraded: bool = False
    degraded_reasons: tuple[str, ...] = ()
    fallback_used: bool = False
    citations_available: bool = False
    generator: str = ""
    prompt_version: str = ""
    retrieval_config_version: str = ""
    retrieved: tuple[str, ...] = ()
    malformed_skipped: int = Field(default=0, description="Stored chunks skipped as malformed.")
    context_labels: dict[str, str] = Field(default_factory=dict)
    citations_emitted: int = 0
    citations_dropped: tuple[DroppedCitation, ...] = ()
    attempts: tuple[GenerationAttempt, ...] = ()
    retry_reason: str | None = None
    context_dropped: tuple[ContextDrop, ...] = ()
    context_notes: tuple[ContextNote, ...] = ()
    context_weights: dict[str, float] = Field(default_factory=dict)
    judgement: Judgement | None = Field(
        default=None, description="The judgement stage's verdict (its best sentences).")
    generation_skipped: str | None = Field(
        default=None, description="Why no generator was called (e.g. nothing answers).")
    verdict: Verdict | None = Field(default=None, description="The answer's verdict.")
    latencies_ms: dict[str, float] = Field(default_factory=dict)


class AnswerSpan(Record):
    """The exact words that answer the question, inside a verified citation's quote.
    Built only by the citation gate, from a generator's `DraftSpan`."""

    text: str
    kind: str = Field(description="What it is: PERSON, GPE, DATE, CARDINAL, NOUN, ...")
    label: str
    chunk_id: str
    document_id: str
    start: int = Field(description="Offset in the source document's text.")
    end: int


class SignedReceipt(Record):
    """Proof of what an answer said and on what evidence, signed by the server that answered
    (`citadel.knowledge.receipts`). `payload` is the canonical JSON of the signed fields
    (sorted keys, no spaces, UTF-8); `signature` is Ed25519 over its UTF-8 bytes, base64.
    Anyone with the public key (`GET /v1/keys`) can check it, offline."""

    format: Literal["citadel-receipt-1", "citadel-receipt-2"] = "citadel-receipt-2"
    algorithm: Literal["Ed25519"] = "Ed25519"
    key_id: str
    signed_at: dt.datetime
    payload: str
    signature: str


class Answer(Record):
    answer: str
    citations: tuple[Citation, ...] = ()
    span: AnswerSpan | None = Field(
        default=None, description="The answer's exact words inside its first citation.")
    grounded: bool
    abstained: bool
    conflict: Conflict | None = None
    degraded: bool = False
    missing: str | None = None
    sources_consulted: tuple[SourceRef, ...] = ()
    next_step: str | None = None
    verdict: Verdict | None = Field(
        default=None, description="Why the answer is what it is (every engine answer has one).")
    trace: Trace
    receipt: SignedReceipt | None = Field(
        default=None, description="The signed receipt of this answer (None: unsigned).")
