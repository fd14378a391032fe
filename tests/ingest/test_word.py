"""Word (.docx) loading on files generated here: headings become sections, tables text rows."""

from __future__ import annotations

from citadel.ingest.chunking import ChunkingParams, chunk_document
from citadel.ingest.loaders import load_corpus
from tests.documents import block_import, write_docx


def test_headings_become_sections_and_tables_become_text_rows(tmp_path):
    write_docx(tmp_path / "service-levels.docx")
    corpus = load_corpus([tmp_path])
    assert corpus.skipped == ()
    [doc] = corpus.documents
    assert doc.format == "docx" and doc.title == "Service levels" and doc.pages == ()
    assert doc.text.splitlines() == [
        "# Service levels", "",
        "This document describes how quickly support answers.", "",
        "# 4.2 Thresholds", "",
        "A priority ticket is answered within 4 hours of being opened.", "",
        "Plan | Response time | Price", "",
        "Basic | 2 business days | £0", "",
        "Plus | 4 hours | £12 per month", "",
        "## 4.3 Escalation", "",
        "Unanswered tickets are escalated to a team lead after one day.",
    ]
    chunks = chunk_document(doc, ChunkingParams())
    by_section = {c.section: c.content for c in chunks}
    assert set(by_section) == {"Service levels", "4.2 Thresholds", "4.3 Escalation"}
    assert "Plus | 4 hours | £12 per month" in by_section["4.2 Thresholds"]
    for c in chunks:
        assert doc.text[c.start : c.end] == c.content and c.page_start is None


def test_a_broken_docx_is_refused_with_a_reason(tmp_path):
    (tmp_path / "not-a-zip.docx").write_text("plain text with a .docx name\n")
    (tmp_path / "empty.docx").write_bytes(b"")
    corpus = load_corpus([tmp_path])
    assert corpus.documents == ()
    assert {s.path: s.reason.split(":")[0] for s in corpus.skipped} == {
        "not-a-zip.docx": "broken DOCX", "empty.docx": "broken DOCX"}


def test_a_docx_without_text_is_refused(tmp_path):
    import docx

    docx.Document().save(tmp_path / "blank.docx")
    corpus = load_corpus([tmp_path])
    assert [s.reason for s in corpus.skipped] == ["DOCX has no text"]


def test_without_the_documents_extra_a_docx_is_skipped_with_an_install_hint(
        tmp_path, monkeypatch):
    write_docx(tmp_path / "a.docx")
    block_import(monkeypatch, "docx")
    corpus = load_corpus([tmp_path])
    assert corpus.skipped[0].reason == (
        "Word support is not installed: pip install 'citadel[documents]'")
