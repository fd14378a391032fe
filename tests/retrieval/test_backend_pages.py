"""Page boundaries are stored with the document, and pages with each chunk, in every backend:
a PDF citation names the same page whichever backend served it."""

from __future__ import annotations

import shutil

import pytest

from citadel.ingest.chunking import chunk_document
from citadel.ingest.loaders import load_file
from citadel.retrieval.backends.payload import chunk_payload, read_chunk
from tests.backend_engines import BACKENDS, backend_settings, build_engine
from tests.documents import samples

PDF = "pdflatex-4-pages.pdf"


@pytest.mark.parametrize("name", BACKENDS)
def test_pages_round_trip_through_the_backend(name, tmp_path, request):
    dsn = None
    if name == "postgres":
        dsn = request.getfixturevalue("postgres_database")
    kb = tmp_path / "kb"
    kb.mkdir()
    shutil.copy(samples() / PDF, kb / PDF)
    loaded = load_file(kb / PDF, PDF)
    engine = build_engine(backend_settings(name, tmp_path / "home", dsn), [kb])
    try:
        stored = engine.index.get_document(loaded.document_id)
        assert stored == loaded and len(stored.pages) == 4
        chunks = engine.index.chunks_of(loaded.document_id)
        assert {c.page_start for c in chunks} == {1, 2, 3, 4}
        for c in chunks:
            assert (c.page_start, c.page_end) == (stored.page_at(c.start),
                                                 stored.page_at(c.end - 1))
            assert c.page_breaks == tuple(p for p in stored.pages if c.start < p < c.end)
        hit = engine.index.get_chunk(chunks[-1].chunk_id)
        assert hit == chunks[-1] and hit.page_end == 4
    finally:
        engine.close()


def test_a_stored_chunk_with_forged_pages_is_skipped_as_malformed():
    loaded = load_file(samples() / PDF, PDF)
    [chunk, *_] = chunk_document(loaded)
    payload = chunk_payload(chunk)
    assert read_chunk(payload, "test") == chunk
    assert read_chunk({**payload, "page_end": chunk.page_end + 5}, "test") is None
