"""Section-aware chunking: headings become `section`; offsets point into the source text.

Invariant (tested): `document.text[chunk.start:chunk.end] == chunk.content`. Only the body is
chunked: what comes before `Document.body_start` (a Markdown file's front matter) never is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from citadel.ingest.injection import RULES_VERSION, screen_chunk
from citadel.ingest.loaders import sha256_text
from citadel.records import Chunk, Document
from citadel.text.sentences import sentence_spans

CHUNKER_VERSION = "sections-sentences-v1"
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)


MAX_SECTIONS = 5_000
MAX_CHUNKS = 20_000


class DocumentTooLarge(ValueError):
    """A document over a per-document bound: it is refused whole (never half-indexed), and
    the message is the reason the ingest report shows."""


@dataclass(frozen=True)
class ChunkingParams:
    size: int = 800
    overlap: int = 120
    # Bounds against pathological files (hundreds of thousands of headings cost gigabytes of
    # chunks). They refuse a whole document and never change a kept one's chunks, so they
    # are not part of the fingerprint: the refused document is simply not in the corpus.
    max_sections: int = MAX_SECTIONS
    max_chunks: int = MAX_CHUNKS

    def fingerprint(self) -> dict[str, object]:
        # The injection rules decide each chunk's `suspicious` flag: a new rule set is a new
        # snapshot, never a silent mix of old and new flags.
        return {"version": CHUNKER_VERSION, "size": self.size, "overlap": self.overlap,
                "screening": RULES_VERSION}


def sections(doc: Document, max_sections: int | None = None) -> list[tuple[str, int, int]]:
    """(section name, body start, body end) for each heading-delimited region; more than
    `max_sections` of them raises `DocumentTooLarge` before they are all collected."""
    if doc.format == "pdf":
        regions = _outline_sections(doc)
        if max_sections is not None and len(regions) > max_sections:
            raise _too_many("sections", max_sections, "max_sections_per_document")
        return regions
    body, end = doc.body_start, len(doc.text)
    # (start, body start, name) of each heading, as offsets in the whole text. The body is
    # searched as a string of its own so that `^` matches at its start.
    headings: list[tuple[int, int, str]] = []
    if doc.format != "text":
        for h in _HEADING.finditer(doc.body):
            headings.append((body + h.start(), body + h.end(), h.group(2).strip()))
            if max_sections is not None and len(headings) > max_sections:
                raise _too_many("sections", max_sections, "max_sections_per_document")
    regions: list[tuple[str, int, int]] = []
    if not headings or headings[0][0] > body:
        regions.append((doc.title, body, headings[0][0] if headings else end))
    for i, (_, after, name) in enumerate(headings):
        regions.append((name, after, headings[i + 1][0] if i + 1 < len(headings) else end))
    if max_sections is not None and len(regions) > max_sections:
        raise _too_many("sections", max_sections, "max_sections_per_document")
    return regions


def _too_many(what: str, limit: int, setting: str) -> DocumentTooLarge:
    return DocumentTooLarge(f"too many {what} (more than {limit:,}; the {setting} setting)")


def _outline_sections(doc: Document) -> list[tuple[str, int, int]]:
    """PDF: the outline's headings are printed in the text, not marked up; a section runs
    from its entry's offset (its heading included) to the next entry's."""
    starts = [(0, doc.title), *doc.outline]
    return [(name, start, starts[i + 1][0] if i + 1 < len(starts) else len(doc.text))
            for i, (start, name) in enumerate(starts)]


def page_fields(doc: Document, start: int, end: int) -> dict[str, object]:
    """A chunk's pages (paged formats only): where it starts and ends, and the page breaks
    inside it, so that the gate can name the page of any quote in it."""
    if not doc.pages:
        return {}
    return {"page_start": doc.page_at(start), "page_end": doc.page_at(end - 1),
            "page_breaks": tuple(p for p in doc.pages if start < p < end)}


def chunk_document(doc: Document, params: ChunkingParams = ChunkingParams()) -> list[Chunk]:
    """The document's chunks; `DocumentTooLarge` past `params.max_sections` sections or
    `params.max_chunks` chunks (raised as soon as the bound is crossed, so a pathological
    file costs no more than the bound)."""
    chunks: list[Chunk] = []
    for section, start, end in sections(doc, params.max_sections):
        units = list(_split_long(sentence_spans(doc.text, start, end), params.size))
        for span_start, span_end in _pack(units, params):
            if len(chunks) >= params.max_chunks:
                raise _too_many("chunks", params.max_chunks, "max_chunks_per_document")
            content = doc.text[span_start:span_end]
            chunk = Chunk(
                chunk_id=f"{doc.document_id}#{len(chunks) + 1}",
                document_id=doc.document_id,
                source=doc.source,
                title=doc.title,
                section=section,
                category=doc.category,
                content=content,
                start=span_start,
                end=span_end,
                authority=doc.authority,
                effective_date=doc.effective_date,
                supersedes=doc.supersedes,
                tenant=doc.tenant,
                content_sha256=sha256_text(content),
                **page_fields(doc, span_start, span_end),
            )
            chunks.append(screen_chunk(chunk, doc.hidden_spans, doc.flags))
    return chunks


def _split_long(spans: list[tuple[int, int]], size: int):
    """A single sentence longer than a chunk is cut into size-bounded pieces."""
    for start, end in spans:
        while end - start > size:
            yield start, start + size
            start += size
        yield start, end


def _pack(units: list[tuple[int, int]], params: ChunkingParams) -> list[tuple[int, int]]:
    """Greedily pack consecutive sentences into chunks; each new chunk repeats the trailing
    sentences of the previous one that fit in `overlap` characters."""
    packed: list[tuple[int, int]] = []
    i = 0
    while i < len(units):
        j = i
        while j + 1 < len(units) and units[j + 1][1] - units[i][0] <= params.size:
            j += 1
        packed.append((units[i][0], units[j][1]))
        if j + 1 >= len(units):
            break
        nxt = j + 1
        while nxt - 1 > i and units[j][1] - units[nxt - 1][0] <= params.overlap:
            nxt -= 1
        i = nxt
    return packed
