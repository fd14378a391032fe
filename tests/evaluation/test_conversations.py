"""The conversations suite: its chains file checks, its rewrite score, and the harness end
to end on tests/evaluation/data/conversations-mini.jsonl (made-up chains over the demo KB and
the support-mini dataset's bike shop)."""

import json
import os
import subprocess
import sys

import pytest

from citadel.evaluation.claims import LexicalClaimScorer
from citadel.evaluation.conversations import load_chains, run_conversations, same_question
from citadel.evaluation.datasets import DatasetError
from citadel.evaluation.suites import RunOptions
from tests.conftest import ROOT, hashing_settings
from tests.evaluation.test_support import MINI

CHAINS = ROOT / "tests" / "evaluation" / "data" / "conversations-mini.jsonl"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    home = tmp_path_factory.mktemp("conversations")
    options = RunOptions(hashing_settings(home), LexicalClaimScorer(), progress=False)
    return run_conversations(load_chains(CHAINS), options, MINI)


def test_the_mini_chains_load_with_every_kind():
    chains = load_chains(CHAINS).chains
    assert {c.kind for c in chains} == {"ellipsis", "pronoun", "what_about", "variant",
                                        "standalone", "off_topic"}
    assert {c.kb for c in chains} == {"demo", "bike-shop"}


@pytest.mark.parametrize(("line", "message"), [
    ('{"id": "x", "kb": "demo", "kind": "sarcasm", "turns": []}', "kind"),
    ('{"id": "x", "kb": "demo", "kind": "ellipsis", "turns": []}', "at least one turn"),
    ('{"id": "x", "kb": "demo", "kind": "ellipsis", "turns": [{"question": "q?", '
     '"standalone": "q?", "expect": "answer"}]}', "needs answer_any and cite_any"),
    ('{"id": "x", "kb": "demo", "kind": "ellipsis", "turns": [{"question": "q?", '
     '"expect": "abstain"}]}', "turns.0.standalone"),
    ("[1, 2]", "not a JSON object"),
    ("{", "not a JSON object"),
])
def test_a_bad_chain_is_an_error_naming_the_file_and_line(tmp_path, line, message):
    path = tmp_path / "chains.jsonl"
    path.write_text(CHAINS.read_text().splitlines()[0] + "\n" + line + "\n")
    with pytest.raises(DatasetError, match=message) as raised:
        load_chains(path)
    assert f"{path}:2" in str(raised.value)


def test_duplicate_ids_and_a_missing_file_are_errors(tmp_path):
    path = tmp_path / "chains.jsonl"
    first = CHAINS.read_text().splitlines()[0]
    path.write_text(f"{first}\n{first}\n")
    with pytest.raises(DatasetError, match="appears twice"):
        load_chains(path)
    with pytest.raises(DatasetError, match="--chains FILE"):
        load_chains(tmp_path / "none.jsonl")


def test_the_same_question_is_the_same_whatever_its_case_and_punctuation():
    assert same_question("How long does UK delivery take?", "how long does uk delivery take")
    assert not same_question("How long does UK delivery take?", "How long does EU delivery "
                                                                "take?")


def test_the_harness_scores_every_turn_and_every_follow_up(run):
    metrics, decisions, rewrites = (run.tally.metrics(), run.extra["decisions"],
                                    run.extra["rewrites"])
    assert len(run.rows) == 14 and run.dataset["chains"] == 7
    assert decisions["overall"]["all"]["total"] == 14
    assert rewrites["overall"]["all"]["total"] == 7  # every turn after a chain's first
    assert decisions["kb"]["bike-shop"]["total"] == 2 and rewrites["kb"]["demo"]["total"] == 6
    assert set(decisions["kind"]) == {"ellipsis", "pronoun", "what_about", "variant",
                                      "standalone", "off_topic"}
    assert metrics["citation_integrity"] == metrics["quote_validity"] == 1.0
    follow_up = next(r for r in run.rows if r["id"] == "mini-c01 turn 2")
    assert follow_up["standalone"] == "How much does UK standard delivery cost?"
    assert follow_up["rewrite_right"] and follow_up["decision_right"]
    assert next(r for r in run.rows if r["id"] == "mini-c01 turn 1")["rewrite_right"] is None
    off_topic = next(r for r in run.rows if r["id"] == "mini-c06 turn 2")
    assert off_topic["decision_right"] and off_topic["response"]["abstained"]
    wrong = sum(not r["decision_right"] or r["rewrite_right"] is False for r in run.rows)
    assert len(run.extra["misses"]) == wrong
    for m in run.extra["misses"]:
        assert {"id", "question", "standalone", "labelled", "expected", "outcome",
                "reasons"} <= set(m)


def test_without_a_support_dataset_its_chains_are_skipped_and_said_so(tmp_path):
    options = RunOptions(hashing_settings(tmp_path), LexicalClaimScorer(), progress=False,
                         limit=1)
    run = run_conversations(load_chains(CHAINS), options, None, only=["demo", "bike-shop"])
    assert [r["id"] for r in run.rows] == ["mini-c01 turn 1", "mini-c01 turn 2"]
    bike = load_chains(CHAINS).chains[-1]
    options = RunOptions(options.settings, options.scorer, progress=False)
    run = run_conversations(load_chains(CHAINS), options, None, only=[bike.kb])
    assert run.rows == [] and run.dataset["skipped"] == [
        "1 chains of bike-shop: no support dataset (--dataset DIR)"]


def test_cli_runs_the_suite_and_writes_the_report(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "citadel", "eval", "--suite", "conversations", "--chains",
         str(CHAINS), "--kb", "demo", "--limit", "2", "--out", str(tmp_path / "out"), "-q"],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
        env={**os.environ, "CITADEL_HOME": str(tmp_path / "home"),
             "CITADEL_EMBEDDER": "hashing"})
    assert out.returncode == 0, out.stderr
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["suite"] == "conversations" and results["metrics"]["rewrite_right"] == 1.0
    report = (tmp_path / "out" / "GROUNDED_EVAL.md").read_text()
    assert "| rewrite by chain kind | ellipsis |" in report
    bad = subprocess.run(
        [sys.executable, "-m", "citadel", "eval", "--suite", "conversations", "--chains",
         str(tmp_path / "none.jsonl")], capture_output=True, text=True, timeout=600,
        env={**os.environ, "CITADEL_HOME": str(tmp_path / "home")})
    assert bad.returncode != 0 and "--chains FILE" in bad.stderr
    assert "Traceback" not in bad.stderr
