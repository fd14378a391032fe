"""The LLM judge of claim support and the `claims` suite, against a scripted model server."""

from __future__ import annotations

import json

import pytest

from citadel.answering.generators.chat_client import ChatClient, ChatConfig
from citadel.evaluation.claims import LexicalClaimScorer
from citadel.evaluation.llm_judge import LLMClaimScorer, llm_scorer, read_verdict
from citadel.evaluation.scifact import load_scifact
from citadel.evaluation.suites import RunOptions, run_claims
from tests.evaluation.test_suites import hashing_settings, write_beir
from tests.llm_server import Reply, ScriptedLLM, Seen


@pytest.fixture(scope="module")
def llm():
    with ScriptedLLM() as server:
        yield server


def judge(llm: ScriptedLLM, model: str) -> LLMClaimScorer:
    return LLMClaimScorer(ChatClient(ChatConfig(base_url=llm.base_url, model=model,
                                                max_retries=0, timeout=5.0)))


def by_negation(req: Seen) -> str:
    """A scripted judge: 'supports' unless exactly one side is negated."""
    claim = req.user.split("Claim: ")[1].split("\n")[0]
    evidence = req.user.split("Evidence: ")[1].split("\n")[0]
    same = ("not" in claim.split()) == ("not" in evidence.split())
    return json.dumps({"verdict": "supports" if same else "contradicts"})


@pytest.mark.parametrize(("reply", "verdict"), [
    ('{"verdict": "supports"}', "supports"),
    ('{"verdict": "contradicts"}', "contradicts"),
    ("There is not enough information here.", "not_enough_information"),
    ("Verdict: SUPPORTS", "supports"),
    ("maybe?", "unreadable"),
])
def test_read_verdict(reply, verdict):
    assert read_verdict(reply) == verdict


def test_judge_scores_supports_as_one_and_caches_each_pair(llm):
    llm.script("j-cache", Reply(by_negation))
    scorer = judge(llm, "j-cache")
    assert scorer.score("Coffee delays sleep.", "Coffee delays sleep onset.") == 1.0
    assert scorer.score("Coffee does not delay sleep.", "Coffee delays sleep onset.") == 0.0
    assert scorer.score("Coffee delays sleep.", "Coffee delays sleep onset.") == 1.0
    assert len(llm.requests["j-cache"]) == 2
    assert scorer.verdicts == {"supports": 1, "contradicts": 1}
    body = llm.requests["j-cache"][0].body
    assert body["response_format"]["json_schema"]["schema"]["properties"]["verdict"]["enum"]
    assert scorer.name == "llm:j-cache/claim-judge-v1"


def test_claims_suite_reports_balanced_accuracy_and_agreement_with_lexical(llm, tmp_path):
    write_beir(tmp_path / "scifact")
    llm.script("j-suite", Reply(by_negation))
    options = RunOptions(hashing_settings(tmp_path / "home"), judge(llm, "j-suite"),
                         progress=False)
    run = run_claims(load_scifact(tmp_path / "scifact"), options)
    metrics = run.tally.metrics()
    assert len(run.rows) == 2  # the held-out half: claims 1 (SUPPORT) and 3 (CONTRADICT)
    assert metrics["claim_scorer_balanced_accuracy"] == 1.0
    assert "lexical_balanced_accuracy" in metrics and "agreement_with_lexical" in metrics
    assert {r["verdict"] for r in run.rows} == {"supports", "contradicts"}


def test_claims_suite_with_the_lexical_scorer_has_no_self_comparison(tmp_path):
    write_beir(tmp_path / "scifact")
    options = RunOptions(hashing_settings(tmp_path / "home"), LexicalClaimScorer(),
                         progress=False)
    metrics = run_claims(load_scifact(tmp_path / "scifact"), options).tally.metrics()
    assert "agreement_with_lexical" not in metrics
    assert metrics["claim_scorer_balanced_accuracy"] == 1.0


def test_llm_scorer_without_a_model_server_says_what_to_set(tmp_path):
    from citadel.config import ConfigError, Settings

    with pytest.raises(ConfigError, match="CITADEL_GENERATOR=local"):
        llm_scorer(Settings(home=tmp_path))
