"""The suites end to end. The demo run is the CI gate: real MiniLM, the real CLI, and it fails
if citation integrity or quote validity is below 100%."""

import json
import os
import subprocess
import sys

from citadel.evaluation.claims import LexicalClaimScorer
from citadel.evaluation.datasets import load_qa
from citadel.evaluation.scifact import load_scifact
from citadel.evaluation.suites import RunOptions, run_scifact
from tests.conftest import ROOT, hashing_settings

METRIC_KEYS = {"recall_at_k", "ndcg_at_10", "mrr", "citation_integrity", "quote_validity",
               "claim_support", "citation_completeness", "answer_correctness",
               "abstention_accuracy", "false_abstention_rate"}
RUN_KEYS = {"snapshot_id", "backend", "strategy", "generator", "prompt_version",
            "retrieval_config_version", "git_commit", "dataset", "counts"}


def test_demo_suite_ci_gate_integrity_and_quote_validity_are_100_percent(minilm_home, tmp_path):
    out = tmp_path / "out"
    env = {**os.environ, "CITADEL_HOME": str(tmp_path / "home")}
    env.pop("CITADEL_EMBEDDER", None)
    proc = subprocess.run(
        [sys.executable, "-m", "citadel", "eval", "--suite", "demo", "--eval-home",
         str(minilm_home), "--out", str(out), "--check", "--quiet"],
        capture_output=True, text=True, env=env, timeout=600, cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads((out / "results.json").read_text())
    metrics = results["metrics"]
    assert metrics["citation_integrity"] == 1.0, results["failures"].get("citation_integrity")
    assert metrics["quote_validity"] == 1.0, results["failures"].get("quote_validity")
    assert set(metrics) >= METRIC_KEYS and set(results) >= RUN_KEYS
    assert all(0.0 <= v <= 1.0 for v in metrics.values())
    dataset = load_qa(ROOT / "eval" / "qa.jsonl")
    assert results["dataset"]["version"] == dataset.version
    assert results["counts"]["abstention_accuracy"]["n"] == sum(
        not r.answerable for r in dataset.rows)
    rows = [json.loads(line) for line in (out / "rows.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == [r.id for r in dataset.rows]
    assert {"question", "retrieved", "context_labels", "response", "dropped_citations"} <= set(
        rows[0])
    summary = (out / "GROUNDED_EVAL.md").read_text()
    assert "integrity (membership)" in summary and results["snapshot_id"] in summary
    # The user's own home was never touched: the suite used its eval home.
    assert not (tmp_path / "home" / "catalog.sqlite").exists()


def write_beir(folder):
    docs = {
        "101": ("Vitamin D and bone density", ["Vitamin D supplements increase bone density "
                "in elderly women.", "The trial enrolled 300 participants."]),
        "102": ("Statins and hip fracture", ["Statin use reduces the risk of hip fracture.",
                "Risk was lowest among current users."]),
        "103": ("Coffee and sleep", ["Evening coffee delays sleep onset in adults.",
                "Caffeine blocks adenosine receptors."]),
        "104": ("Exercise and memory", ["Aerobic exercise improves memory in older adults.",
                "Hippocampal volume grew after one year."]),
    }
    (folder / "qrels").mkdir(parents=True)
    with (folder / "corpus.jsonl").open("w") as fh:
        for doc_id, (title, sentences) in docs.items():
            fh.write(json.dumps({"_id": doc_id, "title": title, "text": " ".join(sentences),
                                 "sentences": sentences}) + "\n")
    queries = [
        ("1", "Vitamin D supplements increase bone density.", {"101": [
            {"sentences": [0], "label": "SUPPORT"}]}),
        ("2", "Statin use increases the risk of hip fracture.", {"102": [
            {"sentences": [0], "label": "CONTRADICT"}]}),
        ("3", "Evening coffee does not delay sleep onset.", {"103": [
            {"sentences": [0], "label": "CONTRADICT"}]}),
        ("4", "Aerobic exercise improves memory in older adults.", {"104": [
            {"sentences": [0], "label": "SUPPORT"}]}),
    ]
    with (folder / "queries.jsonl").open("w") as fh:
        for qid, text, meta in queries:
            fh.write(json.dumps({"_id": qid, "text": text, "metadata": meta}) + "\n")
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n1\t101\t1\n2\t102\t1\n3\t103\t1\n4\t104\t1\n")


def test_scifact_suite_scores_documents_and_calibrates_the_claim_scorer(tmp_path):
    write_beir(tmp_path / "scifact")
    data = load_scifact(tmp_path / "scifact")
    options = RunOptions(hashing_settings(tmp_path / "home"), LexicalClaimScorer(),
                         progress=False)
    run = run_scifact(data, options)
    assert len(run.rows) == 4
    # Queries that share their words with one abstract find it first (BM25 on titles+text).
    assert run.tally.metrics()["recall_at_k"] == 1.0
    assert run.tally.metrics()["mrr"] == 1.0
    assert run.rows[0]["retrieved_documents"][0] == "101"
    calibration = run.extra["claim_support_calibration"]
    assert set(calibration) == {"support_vs_contradict", "support_vs_random_sentence"}
    held_out = calibration["support_vs_contradict"]["held_out_at_scorer_threshold"]
    assert (held_out["n_positive"], held_out["n_negative"]) == (1, 1)  # claims 1 and 3
    assert held_out["accuracy"] == 1.0  # "does not delay" vs "delays": negation differs
    assert 0.0 <= run.tally.metrics()["claim_scorer_accuracy_vs_random"] <= 1.0
    assert run.config["retrieval_level"] == "document"


def test_streamed_suite_scores_what_the_stream_released(tmp_path):
    from citadel.evaluation.suites import run_qa

    dataset = load_qa(ROOT / "eval" / "qa.jsonl")
    kb = ROOT / "examples" / "support-kb"
    runs = {}
    for stream in (False, True):
        options = RunOptions(hashing_settings(tmp_path / "home"), LexicalClaimScorer(),
                             progress=False, limit=10, stream=stream)
        runs[stream] = run_qa(dataset, [kb], options)
    # The extractive generator drafts the whole answer first, so both paths answer alike
    # (the traces and signed receipts differ in request ids, timings and signing times).
    def shown(run):
        return [{k: v for k, v in r["response"].items() if k not in {"trace", "receipt"}}
                for r in run.rows]

    assert shown(runs[True]) == shown(runs[False])
    assert len(runs[True].rows) == 10


class _LyingStream:
    def __init__(self, answer, deltas):
        self._answer, self._deltas = answer, deltas

    def stream(self, question, **kwargs):
        from citadel.answering.streaming import DeltaEvent, DoneEvent

        yield from (DeltaEvent(text=t) for t in self._deltas)
        if self._answer is not None:
            yield DoneEvent(answer=self._answer)


def test_ask_refuses_a_stream_whose_text_is_not_its_final_answer(hashing_engine, tmp_path):
    import pytest

    from citadel.evaluation.suites import StreamMismatch, ask

    answer = hashing_engine.answer("How long do I have to return an item?")
    options = RunOptions(hashing_settings(tmp_path), LexicalClaimScorer(), stream=True)
    assert ask(_LyingStream(answer, [answer.answer[:5], answer.answer[5:]]), "q",
               options) is answer
    with pytest.raises(StreamMismatch, match="other text"):
        ask(_LyingStream(answer, ["Something else."]), "q", options)
    with pytest.raises(StreamMismatch, match="without a done event"):
        ask(_LyingStream(None, [answer.answer]), "q", options)


def test_eval_stream_refuses_the_claims_suite():
    proc = subprocess.run([sys.executable, "-m", "citadel", "eval", "--suite", "claims",
                           "--stream"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 2 and "--stream needs a suite that asks questions" in proc.stderr
