"""The squad2 and counterfactual suites on a small SQuAD 2.0-format fixture (the real file is
scored by `make squad2` / `make counterfactual`, minutes, outside CI), and their metrics."""

import json

import pytest

from citadel.evaluation.claims import LexicalClaimScorer
from citadel.evaluation.counterfactual import (
    CounterfactualCase,
    build_cases,
    run_counterfactual,
    twin_text,
    write_cases,
)
from citadel.evaluation.datasets import DatasetError
from citadel.evaluation.squad2 import (
    load_squad2,
    run_squad2,
    select_questions,
    spread,
    squad_normalize,
    token_f1,
)
from citadel.evaluation.suites import RunOptions
from citadel.text.analysis import Analyser
from tests.conftest import hashing_settings

ARTICLES = [
    {"title": "Lyon_Company", "paragraphs": [
        {"context": "The Acme company is headquartered in Lyon. It was founded in 1921 by "
                    "two engineers from Paris.",
         "qas": [
             {"id": "q1", "question": "Where is the Acme company headquartered?",
              "is_impossible": False,
              "answers": [{"text": "Lyon", "answer_start": 37}]},
             {"id": "q2", "question": "Where is the Acme company's factory?",
              "is_impossible": True, "answers": [],
              "plausible_answers": [{"text": "Lyon", "answer_start": 37}]},
         ]}]},
    {"title": "Rivers", "paragraphs": [
        {"context": "The Rhone river flows through Geneva before it reaches the sea in 1900 "
                    "kilometres.",
         "qas": [{"id": "q3", "question": "Which city does the Rhone flow through?",
                  "is_impossible": False,
                  "answers": [{"text": "Geneva", "answer_start": 30}]}]}]},
]


@pytest.fixture
def squad_file(tmp_path):
    path = tmp_path / "mini-squad.json"
    path.write_text(json.dumps({"version": "v2.0", "data": ARTICLES}))
    return path


def test_squad_normalisation_and_token_f1():
    assert squad_normalize("The  Lyon, France!") == "lyon france"
    assert token_f1("in Lyon", "Lyon") == pytest.approx(2 / 3)
    assert token_f1("Turin", "Lyon") == 0.0
    assert token_f1("the Lyon", "Lyon") == 1.0


def test_load_squad2_reads_paragraphs_and_questions(squad_file):
    data = load_squad2(squad_file)
    assert list(data.paragraphs) == ["lyon-company-000", "rivers-000"]
    q1, q2, q3 = data.questions
    assert q1.answerable and q1.answers == ("Lyon",) and not q2.answerable
    assert data.paragraphs[q1.paragraph_id].text[q1.starts[0]:][:4] == "Lyon"
    assert [q.id for q in select_questions(data, ["Rivers"])] == ["q3"]
    with pytest.raises(DatasetError, match="no such article"):
        select_questions(data, ["Nope"])
    assert [q.id for q in spread(list(data.questions), 2)] == ["q1", "q2"]


def test_malformed_file_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(DatasetError, match="not a SQuAD 2.0"):
        load_squad2(bad)


def test_squad2_suite_scores_each_layer(squad_file, tmp_path):
    data = load_squad2(squad_file)
    run = run_squad2(data, RunOptions(hashing_settings(tmp_path / "home"),
                                      LexicalClaimScorer(), progress=False))
    metrics = run.tally.metrics()
    assert metrics["citation_integrity"] == 1.0 and metrics["quote_validity"] == 1.0
    assert run.tally.counts()["answer_correctness"]["n"] == 2
    assert run.tally.counts()["abstention_accuracy"]["n"] == 1
    assert {"document_recall_at_k", "evidence_in_context"} <= set(metrics)
    assert set(run.breakdown) == {"Lyon Company", "Rivers"}


def test_counterfactual_cases_swap_the_answer_for_a_span_of_its_type(squad_file, tmp_path):
    data = load_squad2(squad_file)
    cases = build_cases(data, Analyser())
    lyon = next(c for c in cases if c.question_id == "q1")
    assert lyon.kind == "GPE" and lyon.original == "Lyon" and lyon.replacement != "Lyon"
    twin = twin_text(data.paragraphs[lyon.paragraph_id], lyon)
    assert "Lyon" not in twin and lyon.replacement in twin
    path = tmp_path / "cases.jsonl"
    write_cases(cases, path)
    run = run_counterfactual(data, path, RunOptions(hashing_settings(tmp_path / "home"),
                                                    LexicalClaimScorer(), progress=False))
    counts = run.tally.counts()
    assert counts["conflict_flagged"]["n"] == counts["fooled"]["n"] == len(cases)
    assert run.tally.metrics()["citation_integrity"] == 1.0


def test_case_about_a_missing_paragraph_is_refused(squad_file, tmp_path):
    data = load_squad2(squad_file)
    case = CounterfactualCase(id="x", question_id="x", question="?", paragraph_id="nope-000",
                              answers=("a",), original="a", replacement="b", kind="GPE")
    path = tmp_path / "cases.jsonl"
    write_cases([case], path)
    with pytest.raises(DatasetError, match="no paragraph"):
        run_counterfactual(data, path, RunOptions(hashing_settings(tmp_path / "home"),
                                                  LexicalClaimScorer(), progress=False))
