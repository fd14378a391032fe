"""The ingest's analysis stage: chunks come back with their analyses, held compressed."""

import zlib

from citadel.ingest.analysis import AnalysedChunks, analyse_chunks
from citadel.records import ChunkAnalysis
from citadel.text.analysis import Analyser
from tests.helpers_kb import chunk

TEXTS = ["Lyon is in France.", "The museum opened in 1998.", "Lyon is in France."]


def test_analysed_chunks_equal_the_analyser_output_and_keep_identity():
    chunks = [chunk(f"a#{i}", text) for i, text in enumerate(TEXTS)]
    analysed, fresh = analyse_chunks(chunks, Analyser(), False)
    expected = Analyser().analyse_chunks(TEXTS)
    assert fresh == 2  # equal contents are analysed once
    assert [c.analysis for c in analysed] == expected
    assert [c.model_copy(update={"analysis": None}) for c in analysed] == chunks
    assert analysed[-1] == list(analysed)[2] and analysed[1:] == list(analysed)[1:]


def test_analyses_are_held_as_compressed_json_until_a_chunk_is_read():
    chunks = [chunk(f"a#{i}", text) for i, text in enumerate(TEXTS)]
    analysed, _ = analyse_chunks(chunks, Analyser(), False)
    assert isinstance(analysed, AnalysedChunks)
    blobs = analysed._blobs
    assert len(blobs) == 2 and all(isinstance(b, bytes) for b in blobs.values())
    assert all(ChunkAnalysis.model_validate_json(zlib.decompress(b)).sentences
               for b in blobs.values())
    # Each read parses afresh: nothing parsed is kept behind the sequence.
    assert analysed[0] == analysed[0] and analysed[0].analysis is not analysed[0].analysis


def test_a_build_stores_each_chunk_with_the_analysers_own_analysis(demo_kb, tmp_path):
    from citadel.config import Settings
    from citadel.ingest.pipeline import ingest
    from citadel.retrieval.backends import get_backend
    from citadel.retrieval.embedders.hashing import HashingEmbedder

    settings = Settings(home=tmp_path / "home", embedder="hashing")
    report = ingest([demo_kb], settings, embedder=HashingEmbedder(), progress=False)
    index = get_backend(settings).open(report.snapshot_id, 0.5, 50)
    try:
        stored = [*index.chunks_of("refunds-policy"), *index.chunks_of("gift-cards")]
    finally:
        index.close()
    assert stored and all(c.analysis is not None for c in stored)
    assert [c.analysis for c in stored] == Analyser().analyse_chunks([c.content for c in stored])
