"""Attacks on ingestion: each test pins the behaviour that defeats one attack.

Files are generated here, sized so that the whole module runs in seconds; the timing of the
full-size attacks is measured by `benchmarks/ingest_pathological.py`, not asserted."""

from __future__ import annotations

from pathlib import Path

from citadel.ingest.chunking import MAX_CHUNKS, MAX_SECTIONS, ChunkingParams, chunk_document
from citadel.ingest.loaders import load_corpus, parse_document
from citadel.ingest.pipeline import chunk_corpus

# --- denial of service -----------------------------------------------------------------------


def nested_hidden_html(depth: int) -> str:
    """A hidden region holding `depth` unclosed elements, then `depth` closed paragraphs: every
    end tag used to be looked up in the whole stack of open hidden elements."""
    return ("<html><body><div hidden>" + "<span>" * depth + "<p>planted</p>" * depth
            + "</div><h2>Refunds</h2><p>Refunds take five days.</p></body></html>")


def heading_html(count: int) -> str:
    return "<html><body>" + "".join(f"<h2>H{i}</h2>" for i in range(count)) + "</body></html>"


def test_pathological_files_are_parsed_correctly_and_bounded():
    nested = parse_document(nested_hidden_html(20_000), "nested.html", "html")
    chunks = chunk_document(nested)
    visible = [c for c in chunks if "Refunds take five days." in c.content]
    assert len(visible) == 1 and visible[0].content == "Refunds take five days."
    assert not visible[0].suspicious
    hidden = [c for c in chunks if "planted" in c.content]
    assert hidden and all(c.suspicious for c in hidden)
    assert nested.hidden_spans == ((0, nested.text.index("\n\n## Refunds")),)

    many_html = parse_document(heading_html(60_000), "headings.html", "html")
    many_md = parse_document("".join(f"## H{i}\n" for i in range(300_000)), "headings.md",
                             "markdown")
    chunked = chunk_corpus([nested, many_html, many_md], ChunkingParams())
    assert [d.source for d in chunked.documents] == ["nested.html"]
    assert len(chunked.chunks) == len(chunks) <= MAX_CHUNKS
    reasons = {s.path: s.reason for s in chunked.refused}
    assert reasons == {
        "headings.html": f"too many sections (more than {MAX_SECTIONS:,}; "
                         "the max_sections_per_document setting)",
        "headings.md": f"too many sections (more than {MAX_SECTIONS:,}; "
                       "the max_sections_per_document setting)",
    }


def test_document_over_the_chunk_bound_is_refused_with_a_reason(tmp_path: Path):
    (tmp_path / "long.txt").write_text("Long\n\n" + "A sentence about refunds. " * 2_000)
    (tmp_path / "short.md").write_text("# Short\n\nRefunds take five days.\n")
    corpus = load_corpus([tmp_path])
    chunked = chunk_corpus(corpus.documents, ChunkingParams(size=200, overlap=0, max_chunks=50))
    assert [d.source for d in chunked.documents] == ["short.md"]
    assert [(s.path, s.reason) for s in chunked.refused] == [
        ("long.txt", "too many chunks (more than 50; the max_chunks_per_document setting)")]
    assert {c.document_id for c in chunked.chunks} == {"short"}
