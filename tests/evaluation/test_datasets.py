"""The versioned eval sets: what they contain, and what a bad file is told."""

import json

import pytest

from citadel.config import Settings
from citadel.evaluation.datasets import DatasetError, load_poison, load_qa
from citadel.ingest.chunking import ChunkingParams
from citadel.ingest.loaders import load_corpus
from citadel.ingest.pipeline import chunk_documents
from tests.conftest import DEMO_KB, ROOT

QA = ROOT / "eval" / "qa.jsonl"
POISON = ROOT / "eval" / "poison_cases.jsonl"


@pytest.fixture(scope="module")
def demo_chunk_ids() -> set[str]:
    """Chunk ids of the demo KB under the default chunking (no embedding needed)."""
    defaults = Settings()
    corpus = load_corpus([DEMO_KB])
    params = ChunkingParams(defaults.chunk_size, defaults.chunk_overlap)
    return {c.chunk_id for c in chunk_documents(corpus.documents, params)}


def test_qa_set_is_versioned_and_covers_every_kind():
    qa = load_qa(QA)
    assert qa.version == "qa-v1" and len(qa.rows) >= 40
    kinds = {r.kind for r in qa.rows}
    assert kinds == {"single", "multi", "unanswerable"}
    assert all(r.key_facts for r in qa.rows if r.answerable)
    multi = [r for r in qa.rows if r.kind == "multi"]
    assert all(len(r.gold_documents) >= 2 for r in multi)
    assert len({r.question.lower() for r in qa.rows}) == len(qa.rows)


def test_qa_gold_chunks_exist_in_the_demo_kb(demo_chunk_ids):
    missing = [(r.id, c) for r in load_qa(QA).rows for c in r.gold_chunk_ids
               if c not in demo_chunk_ids]
    assert missing == []


def test_poison_cases_load_and_name_demo_documents():
    cases = load_poison(POISON)
    assert cases.version.startswith("poison-") and cases.rows
    demo_ids = {d.document_id for d in load_corpus([DEMO_KB]).documents}
    named = {d for c in cases.rows for d in (*c.must_cite, *c.must_not_cite)
             if not any(getattr(x, "path", None) for x in c.documents)}
    assert named <= demo_ids


def write(path, *rows):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


ROW = {"id": "q1", "question": "How long?", "gold_chunk_ids": ["a#1"], "key_facts": ["30 days"]}


def test_header_line_sets_the_version(tmp_path):
    qa = load_qa(write(tmp_path / "qa.jsonl", {"version": "qa-x"}, ROW))
    assert qa.version == "qa-x" and qa.rows[0].gold_documents == ("a",)


@pytest.mark.parametrize("rows, message", [
    (({**ROW, "version": "v1"}, {**ROW, "id": "q2", "version": "v2"}), "disagree on the version"),
    (({**ROW, "version": "v1"}, {**ROW, "version": "v1"}), "duplicate id"),
    (({"id": "q1", "version": "v1", "question": "x?"},), "needs gold_chunk_ids"),
    (({"id": "q1", "version": "v1", "question": "x?", "answerable": False},), "unanswerable"),
    (("{not json",), "not valid JSON"),
    (({**ROW},), "version"),
])
def test_bad_eval_files_say_where_and_why(tmp_path, rows, message):
    with pytest.raises(DatasetError, match=message) as err:
        load_qa(write(tmp_path / "qa.jsonl", *rows))
    assert "qa.jsonl" in str(err.value)


def test_missing_file_is_a_dataset_error(tmp_path):
    with pytest.raises(DatasetError, match="not found"):
        load_qa(tmp_path / "nope.jsonl")
