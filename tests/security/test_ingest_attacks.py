"""Attacks on ingestion: each test pins the behaviour that defeats one attack.

Files are generated here, sized so that the whole module runs in seconds; the timing of the
full-size attacks is measured by `benchmarks/ingest_pathological.py`, not asserted."""

from __future__ import annotations

import os
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


# --- the walk of the ingest root -------------------------------------------------------------


def test_symlink_out_of_the_ingest_root_is_not_followed(tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("root:x:0:0:root:/root:/bin/bash\n")
    (outside / "folder").mkdir()
    (outside / "folder" / "more.md").write_text("# More\n\nNot the operator's.\n")
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "faq.md").write_text("# FAQ\n\nRefunds take five days.\n")
    (kb / "passwd.txt").symlink_to(outside / "secret.txt")
    (kb / "escape").symlink_to(outside / "folder", target_is_directory=True)
    (kb / "dangling.md").symlink_to(tmp_path / "nowhere.md")
    corpus = load_corpus([kb])
    assert [d.source for d in corpus.documents] == ["faq.md"]
    assert all("root:x" not in d.text for d in corpus.documents)
    reasons = {s.path: s.reason for s in corpus.skipped}
    assert reasons == {
        "passwd.txt": "symbolic link to outside the ingest root: not followed",
        "escape": "symbolic link to outside the ingest root: not followed",
        "dangling.md": "broken symbolic link: not followed",
    }


def test_symlink_inside_the_root_neither_duplicates_nor_loops(tmp_path: Path):
    kb = tmp_path / "kb"
    (kb / "policies").mkdir(parents=True)
    (kb / "policies" / "refunds.md").write_text("# Refunds\n\nRefunds take five days.\n")
    (kb / "refunds-link.md").symlink_to(kb / "policies" / "refunds.md")
    (kb / "policies" / "loop").symlink_to(kb, target_is_directory=True)
    corpus = load_corpus([kb])
    assert [d.source for d in corpus.documents] == ["policies/refunds.md"]
    reasons = {s.path: s.reason for s in corpus.skipped}
    assert set(reasons) == {"refunds-link.md", "policies/loop"}
    assert reasons["refunds-link.md"].startswith("symbolic link to policies/refunds.md: not")


def test_folder_vanishing_during_the_walk_is_skipped_not_fatal(tmp_path: Path, monkeypatch):
    kb = tmp_path / "kb"
    for folder in ("a", "gone", "z"):
        (kb / folder).mkdir(parents=True)
        (kb / folder / "doc.md").write_text(f"# {folder}\n\nText of {folder}.\n")
    real_scandir = os.scandir

    def scandir(path="."):
        # The folder is removed between its parent's listing and its own.
        if os.fspath(path).endswith("gone"):
            raise FileNotFoundError(2, "No such file or directory", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    corpus = load_corpus([kb])
    assert [d.source for d in corpus.documents] == ["a/doc.md", "z/doc.md"]
    assert [(s.path, s.reason) for s in corpus.skipped] == [
        ("gone", "folder could not be read: No such file or directory")]
