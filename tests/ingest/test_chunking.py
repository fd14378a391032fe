from hypothesis import given, settings
from hypothesis import strategies as st

from citadel.ingest.chunking import ChunkingParams, chunk_document
from citadel.ingest.loaders import load_corpus, parse_document
from tests.conftest import DEMO_KB

DOCS = load_corpus([DEMO_KB]).documents


@settings(max_examples=30, deadline=None)
@given(size=st.integers(100, 3000), overlap=st.integers(0, 400))
def test_offsets_round_trip_for_every_chunk(size, overlap):
    for doc in DOCS:
        for chunk in chunk_document(doc, ChunkingParams(size, overlap)):
            assert doc.text[chunk.start : chunk.end] == chunk.content
            assert chunk.content.strip()


def test_chunk_ids_are_stable_unique_and_readable():
    first = [c.chunk_id for d in DOCS for c in chunk_document(d)]
    again = [c.chunk_id for d in load_corpus([DEMO_KB]).documents for c in chunk_document(d)]
    assert first == again
    assert len(set(first)) == len(first)
    assert "refunds-policy#2" in first


def test_headings_become_sections():
    doc = next(d for d in DOCS if d.document_id == "refunds-policy")
    chunks = chunk_document(doc)
    eligibility = next(c for c in chunks if c.section == "Eligibility")
    assert eligibility.content.startswith("Returns are accepted within 30 days of delivery.")
    assert eligibility.chunk_id == "refunds-policy#2"


def test_long_sections_split_with_overlap():
    text = "# T\n\n" + " ".join(f"Sentence number {i} is here." for i in range(60))
    doc = parse_document(text, "long.md", "markdown")
    chunks = chunk_document(doc, ChunkingParams(size=200, overlap=60))
    assert len(chunks) > 5
    assert all(len(c.content) <= 200 for c in chunks)
    # consecutive chunks share their boundary sentence
    assert chunks[1].start < chunks[0].end


def test_front_matter_is_not_chunked():
    doc = next(d for d in DOCS if d.document_id == "refunds-policy")
    assert all("effective_date" not in c.content for c in chunk_document(doc))
