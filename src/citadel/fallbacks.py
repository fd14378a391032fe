"""Honest failure: the fixed, bounded answers given when Citadel cannot answer with evidence."""

from __future__ import annotations

import re

from citadel.records import Context, SourceRef

RETRIEVAL_FAILED = (
    "I can't search the knowledge base right now, so I can't give you a sourced answer."
)
RETRIEVAL_NEXT_STEP = "Please try again in a few minutes; if this keeps happening, contact support."
NO_SOURCES = "No documents in the knowledge base matched the question."

_PRONOUNS = {"i": "you", "my": "your", "me": "you", "mine": "yours", "am": "are", "i'm": "you're"}


def describe_missing(question: str) -> str:
    """The question as the thing that was not found, in the user's own words."""
    q = re.sub(r"\s+", " ", question).strip().rstrip("?!. ")
    words = [_PRONOUNS.get(w.lower(), w) for w in q.split(" ")]
    if words:
        words[0] = words[0][:1].lower() + words[0][1:]
    return " ".join(words)


def abstention_text(question: str) -> str:
    return f'I couldn\'t find an answer to "{describe_missing(question)}" in the knowledge base.'


def sources_consulted(context: Context) -> tuple[SourceRef, ...]:
    return tuple(
        SourceRef(chunk_id=b.chunk.chunk_id, title=b.chunk.title, source=b.chunk.source,
                  section=b.chunk.section)
        for b in context.blocks
    )
