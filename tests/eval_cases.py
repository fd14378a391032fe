"""Hand-built chunks, citations and answers with known metric values, for the eval tests."""

from __future__ import annotations

import hashlib

from citadel.records import Answer, Chunk, Citation, Conflict, Document, Trace

SNAPSHOT = "kb-test"
REFUNDS_TEXT = (
    "# Refunds\n\n## Eligibility\n\nReturns are accepted within 30 days of delivery.\n\n"
    "Refunds are paid within 5 business days.\n"
)
FORUM_TEXT = "# Forum\n\nYou can return anything within 90 days, no questions asked.\n"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def document(document_id: str, text: str) -> Document:
    return Document(document_id=document_id, source=f"{document_id}.md", title=document_id.title(),
                    format="markdown", text=text, content_sha256=sha(text))


def chunk_of(doc: Document, content: str, n: int = 1, section: str = "Eligibility") -> Chunk:
    start = doc.text.index(content)
    return Chunk(chunk_id=f"{doc.document_id}#{n}", document_id=doc.document_id,
                 source=doc.source, title=doc.title, section=section, content=content,
                 start=start, end=start + len(content), content_sha256=sha(content))


REFUNDS = document("refunds-policy", REFUNDS_TEXT)
FORUM = document("forum", FORUM_TEXT)
REFUNDS_CHUNK = chunk_of(REFUNDS, REFUNDS_TEXT[REFUNDS_TEXT.index("Returns"):].rstrip())
FORUM_CHUNK = chunk_of(FORUM, FORUM_TEXT[FORUM_TEXT.index("You"):].rstrip(), section="Forum")


class Lookup:
    """A snapshot as `score_answer` sees it: chunks and documents by id."""

    def __init__(self, chunks=(REFUNDS_CHUNK, FORUM_CHUNK), documents=(REFUNDS, FORUM)):
        self.chunks = {c.chunk_id: c for c in chunks}
        self.documents = {d.document_id: d for d in documents}

    def get_chunk(self, chunk_id):
        return self.chunks.get(chunk_id)

    def get_document(self, document_id):
        return self.documents.get(document_id)


def cite(chunk: Chunk, quote: str, label: str = "S1", **changes) -> Citation:
    """A citation as the gate would build it for `quote` in `chunk` (then `changes`)."""
    offset = chunk.content.index(quote)
    fields = dict(label=label, chunk_id=chunk.chunk_id, document_id=chunk.document_id,
                  source=chunk.source, title=chunk.title, section=chunk.section, quote=quote,
                  start=chunk.start + offset, end=chunk.start + offset + len(quote),
                  snapshot_id=SNAPSHOT, content_sha256=chunk.content_sha256)
    fields.update(changes)
    return Citation(**fields)


def answer(
    text: str,
    citations: tuple[Citation, ...] = (),
    *,
    retrieved: tuple[str, ...] = (REFUNDS_CHUNK.chunk_id, FORUM_CHUNK.chunk_id),
    labels: dict[str, str] | None = None,
    abstained: bool = False,
    conflict: Conflict | None = None,
) -> Answer:
    labels = labels if labels is not None else {"S1": REFUNDS_CHUNK.chunk_id,
                                                "S2": FORUM_CHUNK.chunk_id}
    trace = Trace(request_id="r1", backend="local", strategy="test", snapshot_id=SNAPSHOT,
                  generator="hand", prompt_version="hand-v1", retrieval_config_version="rc-test",
                  retrieved=retrieved, context_labels=labels)
    # An abstention says what is missing and what to do next, as the engine's fallbacks do.
    honest = {"missing": "what was asked", "next_step": "Contact support."} if abstained else {}
    return Answer(answer=text, citations=citations, grounded=not abstained and bool(citations),
                  abstained=abstained, conflict=conflict, trace=trace, **honest)
