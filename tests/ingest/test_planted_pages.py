"""Planted pages are flagged and clean support pages are not, through the real loader and
chunker: tests/ingest/data/planted (manifest.json names each page's variant and the planted
text) and tests/ingest/data/clean. benchmarks/injection_screen.py prints the same figures."""

import json
from pathlib import Path

import pytest

from citadel.ingest.chunking import chunk_document
from citadel.ingest.loaders import load_corpus

DATA = Path(__file__).parent / "data"
MANIFEST = json.loads((DATA / "planted" / "manifest.json").read_text("utf-8"))
CLEAN = sorted(p.name for p in (DATA / "clean").iterdir())


@pytest.fixture(scope="module")
def planted():
    return {d.source: d for d in load_corpus([DATA / "planted"]).documents}


@pytest.fixture(scope="module")
def clean():
    return {d.source: d for d in load_corpus([DATA / "clean"]).documents}


def test_the_sets_are_large_enough():
    assert len(MANIFEST) >= 30 and len(CLEAN) >= 30
    assert set(MANIFEST) == {p.name for p in (DATA / "planted").iterdir()} - {"manifest.json"}


@pytest.mark.parametrize("page", sorted(MANIFEST), ids=lambda p: MANIFEST[p]["variant"])
def test_every_chunk_holding_planted_text_is_flagged(planted, page):
    case = MANIFEST[page]
    holding = [c for c in chunk_document(planted[page]) if case["planted"] in c.content]
    assert holding, f"{page}: planted text not in any chunk"
    for c in holding:
        assert c.suspicious, f"{page} ({case['variant']}) was not flagged"
        if case["kind"] == "hidden":
            assert c.suspicious_reason.startswith("hidden HTML text")


@pytest.mark.parametrize("page", CLEAN)
def test_clean_support_pages_are_not_flagged(clean, page):
    flagged = [(c.chunk_id, c.suspicious_reason) for c in chunk_document(clean[page])
               if c.suspicious]
    assert flagged == []
