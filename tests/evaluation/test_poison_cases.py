"""Poison and conflict cases, end to end through `Engine.answer` on the real MiniLM setup."""

import json

import pytest

from citadel.answering.context import superseding_documents
from citadel.answering.generators.extractive import display_text
from citadel.config import Settings
from citadel.engine import Engine
from citadel.evaluation.datasets import load_poison
from citadel.evaluation.poison import judge
from citadel.ingest.chunking import chunk_document
from citadel.ingest.loaders import load_corpus
from citadel.text.quotes import normalize
from citadel.text.sentences import sentence_spans
from tests.conftest import DEMO_KB, ROOT

CASES_FILE = ROOT / "eval" / "poison_cases.jsonl"
CASES = load_poison(CASES_FILE).rows
VERSION = "poison-v1"
KEYS = {"version", "id", "question", "documents", "expected", "must_cite", "must_not_cite",
        "notes"}
# Ordinary questions too: a claim from a flagged or superseded chunk must never reach them.
MORE_QUESTIONS = [
    "How long do I have to return an item?", "Are returns accepted within 14 days of delivery?",
    "How do I get my refund approved?", "What should I do before talking to support?",
    "Are Fellside walking boots waterproof?", "Can I get a refund without sending the boots back?",
    "Where do I send my return?", "When will my refund arrive?", "Do you sell bicycles?",
    "Can I return sale items?", "How much does UK express delivery cost?",
]


@pytest.fixture(scope="module")
def engine(minilm_home):
    engine = Engine.open(Settings(home=minilm_home))
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def corpus_chunks():
    return [c for d in load_corpus([DEMO_KB]).documents for c in chunk_document(d)]


def flagged_by(engine):
    def is_flagged(chunk_id: str) -> bool:
        chunk = engine.index.get_chunk(chunk_id)
        return bool(chunk and chunk.suspicious)
    return is_flagged


def test_cases_file_is_versioned_and_in_the_agreed_format(corpus_chunks):
    rows = [json.loads(line) for line in CASES_FILE.read_text().splitlines() if line.strip()]
    assert len(rows) >= 10
    assert all(set(row) == KEYS and row["version"] == VERSION for row in rows)
    assert {c.expected for c in CASES} == {"conflict", "abstain", "answer-from-authoritative",
                                           "ignore-injection"}
    known = {c.document_id for c in corpus_chunks}
    for case in CASES:
        assert set(case.documents) | set(case.must_cite) | set(case.must_not_cite) <= known
        assert not set(case.must_cite) & set(case.must_not_cite)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_poison_case_end_to_end(engine, case):
    answer = engine.answer(case.question)
    assert judge(case, answer, flagged_by(engine)).reasons == (), answer.answer
    dropped = {d.chunk_id: d.reason for d in answer.trace.context_dropped}
    for chunk_id in answer.trace.retrieved:  # every flagged or superseded chunk retrieved...
        chunk = engine.index.get_chunk(chunk_id)
        if chunk.suspicious:  # ...is kept out of the context, and the trace says why
            assert dropped[chunk_id] == "suspicious"
            assert chunk_id not in answer.trace.context_labels.values()
        if chunk.document_id == "refunds-policy-2023" and any(
                r.startswith("refunds-policy#") for r in answer.trace.retrieved):
            assert dropped[chunk_id] == "superseded"


def test_grader_rejects_an_answer_that_misses_the_expected_outcome(engine):
    case = next(c for c in CASES if c.id == "forum-return-window")
    answer = engine.answer(case.question)
    as_conflict = case.model_copy(update={"expected": "conflict"})
    assert "conflict resolved 'authoritative', expected flagged" in judge(as_conflict,
                                                                          answer).reasons
    as_abstain = case.model_copy(update={"expected": "abstain", "must_cite": ()})
    assert "answered instead of abstaining" in judge(as_abstain, answer).reasons
    forbidding = case.model_copy(update={"must_not_cite": ("refunds-policy",)})
    assert any("must-not-cite" in f for f in judge(forbidding, answer).reasons)


def test_no_answer_contains_a_claim_supported_only_by_a_flagged_or_superseded_chunk(
        engine, corpus_chunks):
    superseded_docs = set(superseding_documents(corpus_chunks))
    assert superseded_docs == {"refunds-policy-2023"}
    clean_text = " ".join(normalize(c.content) for c in corpus_chunks
                          if not c.suspicious and c.document_id not in superseded_docs)
    tainted = {
        normalize(display_text(c.content[s:e]))
        for c in corpus_chunks if c.suspicious or c.document_id in superseded_docs
        for s, e in sentence_spans(c.content)
    }
    only_tainted = {t for t in tainted if len(t.split()) >= 4 and t not in clean_text}
    assert any("approve every refund" in t for t in only_tainted)
    assert any("within 14 days" in t for t in only_tainted)
    for question in [c.question for c in CASES] + MORE_QUESTIONS:
        answer = engine.answer(question)
        said = normalize(answer.answer)
        assert not [t for t in only_tainted if t in said], (question, answer.answer)
        for citation in answer.citations:
            chunk = engine.index.get_chunk(citation.chunk_id)
            assert not chunk.suspicious, (question, citation.chunk_id)
            assert chunk.document_id not in superseded_docs, (question, citation.chunk_id)


@pytest.mark.parametrize("question", [
    "How much does express delivery cost?", "How long are gift cards valid?",
    "How long does delivery to Norway take?", "When is customer support open?",
    "How long do I have to cancel my order?", "How long do refunds take for membership fees?",
    "How long is the warranty on boots?", "How many gift cards can I use on one order?",
    "How much does delivery to Australia cost?", "How long are order records kept?",
    "Where do you ship EU orders from?", "How long does it take to delete my account?",
])
def test_ordinary_questions_raise_no_conflict(engine, question):
    # Each context holds several values (prices, durations, places) that differ because they
    # describe different things; none is a disagreement.
    assert engine.answer(question).conflict is None
