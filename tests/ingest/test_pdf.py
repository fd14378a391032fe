"""PDF loading on real files nobody here wrote (../shared/data/pdf-samples): pages found,
text extracted or the right refusal for each, exact offsets, outline sections, passwords."""

from __future__ import annotations

import shutil

import pytest

from citadel.config import Settings
from citadel.ingest.chunking import ChunkingParams, chunk_document
from citadel.ingest.loaders import LoadError, load_corpus, load_file
from citadel.ingest.pdf import tidy_pages
from tests.documents import GEOTOPO, PASSWORD, PASSWORD_PDF, block_import, described_pages, samples

# Every sample that loads: (page the phrase is on, a phrase printed there).
LOADS = {
    "002-trivial-libre-office-writer.pdf": (1, "Lorem ipsum dolor sit amet, consetetur"),
    GEOTOPO: (12, "Diese Metrik wird auch „französische Eisenbahnmetrik“ genannt."),
    "crazyones-pdfa.pdf": (1, "The misfits. The rebels. The troublemakers."),
    "google-doc-document.pdf": (1, "Beautiful is better than ugly."),
    "habibi.pdf": (1, "حَبيبي habibi حَبيبي"),
    "libre-office-link.pdf": (1, "This is a link to an awesome blog."),
    "minimal-document.pdf": (1, "Lorem ipsum dolor sit amet"),
    "mistitled_outlines_example.pdf": (4, "9 Baz"),
    "multicolumn.pdf": (1, "Two-Column Document with Lorem Ipsum"),
    "pdflatex-4-pages.pdf": (1, "Hello, here is some text without a meaning."),
    "pdflatex-outline.pdf": (2, "1 Foo"),
}
# Every sample that is refused, with the reason the ingest report must give.
REFUSED = {
    "imagemagick-images.pdf": "no text layer (scanned or image-only PDF): needs OCR",
    PASSWORD_PDF: "encrypted PDF: it needs a password",
    "unreadablemetadata.pdf": "broken PDF",
}


@pytest.fixture(scope="module")
def corpus():
    return load_corpus([samples()])


def page_text(doc, number: int) -> str:
    bounds = [*doc.pages, len(doc.text)]
    return doc.text[bounds[number - 1] : bounds[number]]


def test_every_sample_is_either_loaded_or_refused_with_its_reason(corpus):
    pdfs = sorted(p.name for p in samples().glob("*.pdf"))
    assert len(pdfs) == 14 and set(pdfs) == set(LOADS) | set(REFUSED)
    loaded = {d.source: d for d in corpus.documents}
    skipped = {s.path: s.reason for s in corpus.skipped}
    assert set(loaded) == set(LOADS)
    for name, reason in REFUSED.items():
        assert skipped[name].startswith(reason), (name, skipped[name])


def test_pages_found_match_the_samples_description(corpus):
    pages = described_pages()
    for doc in corpus.documents:
        assert len(doc.pages) == pages[doc.source], doc.source
        assert doc.format == "pdf"


@pytest.mark.parametrize("name", sorted(LOADS))
def test_text_is_extracted_on_its_page(corpus, name):
    doc = next(d for d in corpus.documents if d.source == name)
    number, phrase = LOADS[name]
    assert phrase in page_text(doc, number)
    start = doc.text.index(phrase, doc.pages[number - 1])
    assert doc.page_at(start) == number


def test_stored_text_is_the_concatenation_of_the_page_texts(corpus):
    for doc in corpus.documents:
        assert doc.pages[0] == 0 and list(doc.pages) == sorted(doc.pages)
        texts = [page_text(doc, n) for n in range(1, len(doc.pages) + 1)]
        assert "".join(texts) == doc.text
        # A page with text ends its last sentence: nothing runs on into the next page.
        assert all(t == "" or t.endswith("\n") for t in texts)


def test_chunks_know_their_pages_and_offsets_round_trip(corpus):
    for doc in corpus.documents:
        for chunk in chunk_document(doc, ChunkingParams()):
            assert doc.text[chunk.start : chunk.end] == chunk.content
            assert chunk.page_start == doc.page_at(chunk.start)
            assert chunk.page_end == doc.page_at(chunk.end - 1)
            for offset in range(chunk.start, chunk.end, 37):
                assert chunk.page_at(offset) == doc.page_at(offset)


def test_the_outline_becomes_sections_at_the_printed_headings(corpus):
    doc = next(d for d in corpus.documents if d.source == "pdflatex-outline.pdf")
    assert [title for _, title in doc.outline] == ["Foo", "Bar", "Baz"] * 3
    for offset, title in doc.outline:
        assert doc.text.startswith(title, offset)
    # The first "Foo" is section 1 on page 2 (page 1 is the table of contents).
    assert doc.page_at(doc.outline[0][0]) == 2
    chunks = chunk_document(doc, ChunkingParams())
    assert {c.section for c in chunks} >= {"Foo", "Bar", "Baz"}


def test_geotopo_sections_follow_its_nested_outline(corpus):
    doc = next(d for d in corpus.documents if d.source == GEOTOPO)
    assert doc.title == "Geometrie und Topologie"  # from the document metadata
    titles = dict((t, o) for o, t in doc.outline)
    assert doc.page_at(titles["1.2 Metrische Räume"]) == 10
    assert doc.page_at(titles["1.3 Stetigkeit"]) == 13
    page12 = [c for c in chunk_document(doc, ChunkingParams()) if c.page_start == 12]
    assert page12 and {c.section for c in page12} == {"1.2 Metrische Räume"}


def test_mistitled_outline_entries_fall_back_to_their_page_start(corpus):
    doc = next(d for d in corpus.documents if d.source == "mistitled_outlines_example.pdf")
    assert len(doc.outline) == 27
    for offset, title in doc.outline:
        assert title not in doc.text  # "First", "Second", ... are printed nowhere
        assert offset in doc.pages


def test_a_password_protected_pdf_opens_with_its_configured_password(tmp_path):
    pdf = samples() / PASSWORD_PDF
    doc = load_file(pdf, PASSWORD_PDF, password=PASSWORD)
    assert len(doc.pages) == 1 and "Lorem ipsum dolor sit amet" in doc.text
    with pytest.raises(LoadError, match="the configured password does not open it"):
        load_file(pdf, PASSWORD_PDF, password="not-the-password")
    with pytest.raises(LoadError, match="needs a password"):
        load_file(pdf, PASSWORD_PDF)


def test_pdf_passwords_come_from_the_config_file_by_path_or_glob(tmp_path):
    root = tmp_path / "kb"
    (root / "contracts").mkdir(parents=True)
    shutil.copy(samples() / PASSWORD_PDF, root / "contracts" / "nda.pdf")
    shutil.copy(samples() / PASSWORD_PDF, root / "other.pdf")
    config = tmp_path / "citadel.toml"
    config.write_text(f'[pdf_passwords]\n"contracts/*.pdf" = "{PASSWORD}"\n')
    settings = Settings.load(env={"CITADEL_CONFIG": str(config),
                                  "CITADEL_HOME": str(tmp_path / "home")})
    corpus = load_corpus([root], passwords=settings.pdf_password_map())
    assert [d.source for d in corpus.documents] == ["contracts/nda.pdf"]
    assert [(s.path, s.reason.split(":")[0]) for s in corpus.skipped] == [
        ("other.pdf", "encrypted PDF")]
    # The password is a secret: never in the settings' repr, never in a refusal.
    assert PASSWORD not in repr(settings) and PASSWORD not in str(settings)
    assert all(PASSWORD not in s.reason for s in corpus.skipped)
    exact = load_corpus([root], passwords={"other.pdf": PASSWORD})
    assert [d.source for d in exact.documents] == ["other.pdf"]


def test_broken_and_mislabelled_files_are_refused_with_a_reason(tmp_path):
    (tmp_path / "empty.pdf").write_bytes(b"")
    (tmp_path / "text.pdf").write_text("this is not a PDF at all\n")
    truncated = (samples() / "pdflatex-4-pages.pdf").read_bytes()
    (tmp_path / "truncated.pdf").write_bytes(truncated[: len(truncated) // 3])
    corpus = load_corpus([tmp_path])
    reasons = {s.path: s.reason for s in corpus.skipped}
    assert set(reasons) == {"empty.pdf", "text.pdf", "truncated.pdf"}
    assert all(r.startswith("broken PDF") for r in reasons.values()), reasons


def test_without_the_documents_extra_a_pdf_is_skipped_with_an_install_hint(
        tmp_path, monkeypatch):
    block_import(monkeypatch, "pypdf")
    shutil.copy(samples() / "minimal-document.pdf", tmp_path / "a.pdf")
    corpus = load_corpus([tmp_path])
    assert corpus.skipped[0].reason == (
        "PDF support is not installed: pip install 'citadel[documents]'")


def test_tidying_joins_paragraph_lines_and_hyphenated_words_but_keeps_headings():
    body = "x" * 60
    page = (f"1 Introduction\n{body} adip-\niscing {body}\n{body} end\nof the paragraph.\n"
            "Short line\n")
    [tidy] = tidy_pages([page])
    assert tidy == (f"1 Introduction\n{body} adipiscing {body} {body} end of the paragraph.\n"
                    "Short line\n")
    assert tidy_pages(["", "ﬁne ﬂow\r\n"]) == ["", "fine flow\n"]


def test_a_pdf_in_a_folder_loads_beside_markdown(tmp_path, demo_kb):
    shutil.copy(samples() / "minimal-document.pdf", demo_kb / "minimal.pdf")
    corpus = load_corpus([demo_kb])
    assert {"markdown", "pdf"} <= {d.format for d in corpus.documents}
    md = next(d for d in corpus.documents if d.format == "markdown")
    assert md.pages == () and all(c.page_start is None for c in chunk_document(md))


def test_without_an_outline_large_font_lines_are_the_headings_and_the_title(corpus):
    doc = next(d for d in corpus.documents if d.source == "multicolumn.pdf")
    assert doc.title == "Two-Column Document with Lorem Ipsum"  # no metadata title
    headings = [title for _, title in doc.outline]
    assert "Abstract" in headings
    for offset, title in doc.outline:
        assert doc.text.startswith(title.split()[0], offset)
    assert "Abstract" in {c.section for c in chunk_document(doc, ChunkingParams())}
    # Body text in one size throughout: no headings, the file name is the title.
    plain = next(d for d in corpus.documents if d.source == "pdflatex-4-pages.pdf")
    assert plain.outline == () and plain.title == "Pdflatex 4 pages"
