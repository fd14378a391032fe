"""Rendering results: GROUNDED_EVAL.md lists failures with counts; --compare prints deltas."""

import json

from click.testing import CliRunner

from citadel.cli import main
from citadel.evaluation.report import compare, render_html, render_markdown, write_outputs
from citadel.evaluation.results import EvalResults, load_results


def results(**changes) -> EvalResults:
    fields = dict(
        suite="poison",
        metrics={"poison_pass_rate": 0.7, "citation_integrity": 1.0, "recall_at_k": 0.9},
        counts={"poison_pass_rate": {"sum": 7, "n": 10}, "citation_integrity": {"sum": 12,
                "n": 12}, "recall_at_k": {"sum": 9.0, "n": 10}},
        failures={"poison_pass_rate": ["p-3 (conflict): no conflict reported",
                                       "p-5 (abstain): answered instead of abstaining",
                                       "p-9 (ignore-injection): answer | contains approve all"]},
        dataset={"name": "poison", "version": "poison-v1", "sha256": "ab" * 32, "rows": 10,
                 "path": "eval/poison_cases.jsonl"},
        snapshot_id="kb-1", backend="local", strategy="hybrid", generator="extractive",
        prompt_version="extractive-v1", retrieval_config_version="rc-1", git_commit="abc",
        config={"k": 8, "claim_scorer": "lexical-v1", "claim_threshold": 0.31},
    )
    fields.update(changes)
    return EvalResults(**fields)


def test_markdown_summary_shows_counts_and_lists_failures():
    md = render_markdown(results())
    assert "| poison | cases passed | 0.700 | 7/10 cases | 3 |" in md
    assert "| citations | integrity (membership) | 1.000 | 12/12 citations |  |" in md
    assert "| retrieval | recall@8 | 0.900 | mean over 10 questions |  |" in md
    assert "### poison_pass_rate: 7/10 cases, 3 failed" in md
    assert "- p-3 (conflict): no conflict reported" in md
    assert "answer \\| contains" in md  # a pipe cannot break the table
    assert "poison-v1" in md and "kb-1" in md and "rc-1" in md


def test_outputs_are_written_and_results_round_trip(tmp_path):
    paths = write_outputs(tmp_path, results(), [{"id": "p-1"}, {"id": "p-2"}])
    assert sorted(p.name for p in paths) == ["GROUNDED_EVAL.md", "report.html", "results.json",
                                            "rows.jsonl"]
    assert load_results(tmp_path / "results.json") == results()
    assert len((tmp_path / "rows.jsonl").read_text().splitlines()) == 2
    assert "<svg" in render_html(results())


def test_compare_prints_deltas_and_what_changed():
    a = results()
    b = results(metrics={"poison_pass_rate": 0.9, "citation_integrity": 1.0,
                         "recall_at_k": 0.8}, generator="openai",
                config={"k": 8, "claim_scorer": "lexical-v1", "claim_threshold": 0.5})
    text = compare(a, b)
    lines = {line.split()[0]: line.split()[1:] for line in text.splitlines() if line.strip()}
    assert lines["poison_pass_rate"] == ["0.700", "0.900", "+0.200"]
    assert lines["recall_at_k"] == ["0.900", "0.800", "-0.100", "worse"]
    assert lines["citation_integrity"] == ["1.000", "1.000", "+0.000"]
    assert "generator: extractive -> openai" in text
    assert "config.claim_threshold: 0.31 -> 0.5" in text


def test_cli_compare_and_its_errors(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(results().model_dump_json())
    b.write_text(results(metrics={"poison_pass_rate": 1.0}).model_dump_json())
    runner = CliRunner()
    ok = runner.invoke(main, ["eval", "--compare", str(a), str(b)])
    assert ok.exit_code == 0 and "+0.300" in ok.output
    (tmp_path / "bad.json").write_text(json.dumps({"suite": "x"}))
    bad = runner.invoke(main, ["eval", "--compare", str(a), str(tmp_path / "bad.json")])
    assert bad.exit_code == 1 and "not a citadel eval results file" in bad.output
    missing = runner.invoke(main, ["eval", "--compare", str(a), str(tmp_path / "none.json")])
    assert missing.exit_code == 1 and "not found" in missing.output
    neither = runner.invoke(main, ["eval"])
    assert neither.exit_code == 2 and "--suite" in neither.output
