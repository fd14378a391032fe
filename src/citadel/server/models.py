"""Request and response bodies of the HTTP API (they are its OpenAPI schema)."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, create_model
from pydantic_core import PydanticCustomError

from citadel.answering.follow_up import MAX_ANSWER_CHARS, MAX_TURNS
from citadel.knowledge.snapshots import Examples
from citadel.knowledge.verify import Receipt
from citadel.records import Chunk, Document, DocumentFormat, Turn


def _json_integer(value: Any) -> Any:
    # Lax pydantic would read `true` as 1 and `"3"` as 3: a client bug, not a number. An
    # integral JSON number (3 or 3.0) stays valid, as JSON Schema's "integer" says.
    if isinstance(value, bool | str):
        raise PydanticCustomError("int_type", "Input should be a JSON integer, not a {kind}",
                                  {"kind": "boolean" if isinstance(value, bool) else "string"})
    return value


TopK = Annotated[int, Field(ge=1, le=100), BeforeValidator(_json_integer)]


class HistoryTurn(BaseModel):
    """An earlier turn of the conversation. Only `question` is read, to make a follow-up
    stand alone; `answer` is never evidence, authority, instructions or words of a question."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, pattern=r"\S", description="What was asked.")
    answer: str | None = Field(default=None, max_length=MAX_ANSWER_CHARS,
                               description="What was answered (not read).")


class AnswerRequest(BaseModel):
    """A question for `/v1/answer` and `/v1/answer/stream`. Unknown fields are refused; so is
    `tenant`: the tenant comes from the API key (`citadel.server.auth`)."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, pattern=r"\S", description="The question to answer.")
    history: list[HistoryTurn] | None = Field(
        default=None, max_length=MAX_TURNS,
        description="Earlier turns of the conversation, oldest first: a follow-up (\"And "
                    "standard delivery?\") is answered as the question it asks, standing "
                    "alone (`standalone` in the answer). Citations come from this request's "
                    "retrieval only.")
    top_k: TopK | None = Field(default=None,
                               description="Ranked chunks to retrieve (default: configured).")
    category: str | None = Field(default=None, max_length=200,
                                 description="Only documents of this category.")

    def turns(self) -> list[Turn]:
        return turns(self.history)


def turns(history: list[HistoryTurn] | None) -> list[Turn]:
    """A request's earlier turns as the engine takes them."""
    return [Turn(question=t.question, answer=t.answer) for t in history or ()]


def answer_request_model(max_question_chars: int) -> type[AnswerRequest]:
    """`AnswerRequest` whose schema carries the configured question length limit, for the
    question and each earlier one."""
    def limited(description: str) -> tuple[type[str], Any]:
        return (str, Field(min_length=1, max_length=max_question_chars, pattern=r"\S",
                           description=description))

    turn = create_model("HistoryTurn", __base__=HistoryTurn, __doc__=HistoryTurn.__doc__,
                        question=limited("What was asked."))
    field = AnswerRequest.model_fields["history"]
    return create_model(
        "AnswerRequest",
        __base__=AnswerRequest,
        __doc__=AnswerRequest.__doc__,
        question=limited("The question to answer."),
        history=(list[turn] | None, Field(default=None, max_length=MAX_TURNS,  # type: ignore
                                          description=field.description)),
    )


class SearchRequest(BaseModel):
    """A query for `/v1/search`: the chunks retrieval ranks highest, no answer."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, pattern=r"\S", description="What to look for.")
    k: TopK | None = Field(default=None, description="How many chunks (default 5).")
    category: str | None = Field(default=None, max_length=200,
                                 description="Only documents of this category.")


class SearchHit(BaseModel):
    """One retrieved chunk: where it comes from, how it ranked, its text."""

    chunk_id: str
    document_id: str
    title: str
    source: str
    section: str
    category: str
    content: str
    start: int = Field(description="Offset of `content` in the document's source text.")
    end: int
    page_start: int | None = None
    page_end: int | None = None
    authority: float
    effective_date: dt.date | None = None
    rank: int
    score: float = Field(description="The fused retrieval score (higher ranks first).")
    dense_score: float | None = None
    lexical_score: float | None = None


class SearchResults(BaseModel):
    """The chunks retrieval ranks highest for a query: evidence to read, not an answer."""

    query: str
    snapshot_id: str
    hits: list[SearchHit]
    withheld: int = Field(default=0, description="Ranked chunks left out because ingest "
                          "flagged them for planted instructions or hidden text.")


class VerifyRequest(BaseModel):
    """A saved answer to re-check: as `/v1/answer`, MCP's `answer` or the chat endpoint's
    `citadel` object returned it (other fields of those are accepted and not used)."""

    model_config = ConfigDict(extra="allow")

    citations: list[Receipt] = Field(description="The citations, as the answer holds them.")
    answer: str | None = Field(default=None, description="The answer text: its markers are "
                               "checked, and it is compared with what the engine answered.")
    request_id: str | None = Field(default=None, description="The request that answered "
                                   "(or `trace.request_id`).")
    trace: dict[str, Any] | None = None


class FieldError(BaseModel):
    """One problem with one part of a request."""

    loc: list[str | int] = Field(description="Where: e.g. `[\"body\", \"top_k\"]`.")
    message: str
    type: str


class ErrorDetail(BaseModel):
    code: str = Field(description="Machine-readable, e.g. `invalid_request`, `not_found`.")
    message: str
    request_id: str | None = None
    errors: list[FieldError] = Field(default_factory=list,
                                     description="Per-field problems, when validating.")


class ErrorBody(BaseModel):
    """Every error answer has this body, whatever the status."""

    error: ErrorDetail


class TextWindow(BaseModel):
    """A stretch of the source document's text around a chunk."""

    text: str
    start: int = Field(description="Offset of `text` in the document's source text.")
    end: int


class ChunkView(BaseModel):
    """A stored chunk, where it sits in its source, and the text around it."""

    chunk_id: str
    document_id: str
    source: str
    title: str
    section: str
    category: str
    content: str
    start: int = Field(description="Offset of `content` in the document's source text.")
    end: int
    authority: float
    effective_date: dt.date | None = None
    tenant: str | None = None
    content_sha256: str
    page_start: int | None = Field(default=None, description="Paged sources: first page.")
    page_end: int | None = Field(default=None, description="Paged sources: last page.")
    snapshot_id: str
    window: TextWindow

    @classmethod
    def of(cls, chunk: Chunk, document: Document | None, snapshot_id: str,
           window_chars: int) -> ChunkView:
        text = document.text if document is not None else chunk.content
        base = 0 if document is not None else chunk.start
        # Never into what precedes the body (a Markdown file's front matter): it is not shown.
        first = document.body_start if document is not None else 0
        lo = max(first, chunk.start - base - window_chars)
        hi = min(len(text), chunk.end - base + window_chars)
        return cls(
            **chunk.model_dump(include={"chunk_id", "document_id", "source", "title", "section",
                                        "category", "content", "start", "end", "authority",
                                        "effective_date", "tenant", "content_sha256",
                                        "page_start", "page_end"}),
            snapshot_id=snapshot_id,
            window=TextWindow(text=text[lo:hi], start=base + lo, end=base + hi),
        )


class ChunkSpan(BaseModel):
    chunk_id: str
    section: str
    start: int
    end: int


class PageSpan(BaseModel):
    """One page of a paged document (PDF): `text[start:end]` is its text."""

    number: int = Field(description="1-based, as citations name it.")
    start: int
    end: int


class DocumentView(BaseModel):
    """A source document's text and where each of its chunks (and, for a PDF, each of its
    pages) sits in it."""

    document_id: str
    source: str
    title: str
    format: DocumentFormat
    text: str = Field(description="The source text that citation and chunk offsets point "
                      "into: for Markdown and plain text the file's text (universal newlines), "
                      "for HTML, PDF and Word the extracted text.")
    content_sha256: str = Field(description="SHA-256 of `text` as UTF-8.")
    body_start: int = Field(default=0, description="Where the document's body begins in "
                            "`text`: before it, a byte-order mark and a Markdown file's front "
                            "matter, counted by offsets but not part of the document shown.")
    category: str
    authority: float
    effective_date: dt.date | None = None
    tenant: str | None = None
    snapshot_id: str
    chunks: list[ChunkSpan]
    pages: list[PageSpan] = Field(default_factory=list,
                                  description="Page boundaries; empty for formats without.")

    @classmethod
    def of(cls, document: Document, chunks: list[Chunk], snapshot_id: str) -> DocumentView:
        bounds = [*document.pages, len(document.text)]
        return cls(
            **document.model_dump(include={"document_id", "source", "title", "format", "text",
                                           "content_sha256", "body_start", "category",
                                           "authority", "effective_date", "tenant"}),
            snapshot_id=snapshot_id,
            chunks=[ChunkSpan(chunk_id=c.chunk_id, section=c.section, start=c.start, end=c.end)
                    for c in chunks],
            pages=[PageSpan(number=i + 1, start=bounds[i], end=bounds[i + 1])
                   for i in range(len(document.pages))],
        )


class Health(BaseModel):
    status: Literal["ok"] = "ok"


class Readiness(BaseModel):
    ready: bool
    reason: str | None = Field(default=None, description="Why the service is not ready.")
    snapshot_id: str | None = Field(default=None, description="The snapshot being served.")
    active_snapshot_id: str | None = Field(default=None,
                                           description="The snapshot the alias points at.")
    serving_active: bool | None = Field(
        default=None, description="Whether the snapshot served is the active one (a server "
        "switches to a new active snapshot once it is ready, and keeps the old one until).")
    backend: str | None = None
    documents: int | None = Field(
        default=None, description="Documents in the snapshot served that the caller may see: "
                                  "public ones, plus its tenant's with its API key.")
    updated_at: dt.datetime | None = Field(
        default=None, description="When the snapshot served was completed: the knowledge "
                                  "base as of then.")


class About(BaseModel):
    """What the web page offers on this server: the served snapshot's example questions and
    whether the support agent has a business database (the "Customer support" tab)."""

    snapshot_id: str | None = Field(default=None, description="The snapshot being served "
                                    "(None before anything is ingested).")
    examples: Examples = Field(default_factory=Examples, description="The operator's example "
                               "questions (`[examples]` in citadel-sources.toml), kept with the "
                               "snapshot; empty without a list.")
    customer_support: bool = Field(description="A business database is set up: the support "
                                   "agent (`POST /v1/agent`) can answer customers.")
