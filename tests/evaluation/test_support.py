"""The support suite: its scoring rules on hand-made answers, its dataset checks, and the
harness end to end on tests/evaluation/data/support-mini (a made-up dataset in the format)."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from citadel.answering.decision.verdict import verdict
from citadel.evaluation.claims import LexicalClaimScorer
from citadel.evaluation.datasets import DatasetError
from citadel.evaluation.suites import RunOptions
from citadel.evaluation.support import (
    SupportQuestion,
    judge,
    load_support,
    miss,
    normalise,
    run_support,
    stated,
)
from citadel.records import Answer, Conflict, ConflictSide
from tests.conftest import ROOT, hashing_settings
from tests.eval_cases import FORUM_CHUNK, REFUNDS_CHUNK, answer, cite

MINI = ROOT / "tests" / "evaluation" / "data" / "support-mini"
RETURNS = "Returns are accepted within 30 days of delivery"
FORUM = "You can return anything within 90 days"
BOTH = (cite(REFUNDS_CHUNK, RETURNS), cite(FORUM_CHUNK, FORUM, label="S2"))
CONFLICT = Conflict(attribute="return window", values=("30 days", "90 days"),
                    chunk_ids=(REFUNDS_CHUNK.chunk_id, FORUM_CHUNK.chunk_id))


def question(expect: str, **fields) -> SupportQuestion:
    defaults = {"answer": {"answer_any": ("30 days", "a month"),
                           "cite_any": ("refunds-policy.md",)},
                "conflict": {"sides": (("30 days",), ("90 days", "three months"))},
                "abstain": {}}[expect]
    return SupportQuestion(id="q1", kb="shop", question="How long to return?", expect=expect,
                           category="direct", **{**defaults, **fields})


def reasons(q: SupportQuestion, a: Answer) -> tuple[str, ...]:
    decision = judge(q, a)
    assert decision.right == (not decision.reasons)
    return decision.reasons


# --- text --------------------------------------------------------------------------------------


def test_normalise_makes_whitespace_dashes_and_am_pm_spellings_alike():
    assert normalise("Open  9 A.M. –\n5 P.M.") == normalise("open 9am-5pm") == "open 9am-5pm"
    assert normalise("Mon—Fri, 5 pm") == normalise("mon - fri, 5PM")
    assert stated("Returns within 14\u00a0days.", ["two weeks", "14 days"]) == "14 days"
    assert stated("Open until 5 p.m. daily.", ["5 PM"]) == "5 PM"
    assert stated("Open until 5 p.m. daily.", ["6 PM"]) is None
    assert normalise("5 amps, a map") == "5 amps, a map"  # only a time's am/pm


# --- scoring rules: each with a right and a wrong case -----------------------------------------


def test_answer_row_needs_an_expected_word_and_a_cite_any_source():
    q = question("answer")
    assert reasons(q, answer(f"{RETURNS}. [S1]", BOTH[:1])) == ()
    assert reasons(q, answer("Returns are accepted for 90 days. [S1]", BOTH[:1])) == (
        "the answer holds none of ['30 days', 'a month']",)
    assert reasons(q, answer(f"{RETURNS}. [S2]", BOTH[1:])) == (
        "cites none of ['refunds-policy.md']",)


def test_answer_row_is_wrong_when_abstained():
    assert reasons(question("answer"), answer("I couldn't find it.", abstained=True)) == (
        "abstained",)


def test_answer_row_must_not_cite_a_not_cite_file():
    q = question("answer", not_cite=("forum.md",))
    assert reasons(q, answer(f"{RETURNS}. [S1]", BOTH[:1])) == ()
    assert reasons(q, answer(f"{RETURNS}. [S1] {FORUM}. [S2]", BOTH)) == (
        "cites forum.md (not_cite)",)


def test_answer_row_carries_a_conflict_only_when_allowed():
    text = f"{RETURNS}. [S1] Note: {FORUM}. [S2]"
    assert reasons(question("answer", allow_conflict=True),
                   answer(text, BOTH, conflict=CONFLICT)) == ()
    decision = judge(question("answer"), answer(text, BOTH, conflict=CONFLICT))
    assert decision.reasons == ("carries a conflict (allow_conflict is false)",)
    assert decision.false_conflict


def test_cited_files_match_by_path_file_name_or_document_id():
    for name in ("refunds-policy.md", "refunds-policy"):
        assert reasons(question("answer", cite_any=(name,)),
                       answer(f"{RETURNS}. [S1]", BOTH[:1])) == ()


def test_abstain_row_needs_an_abstention_citing_nothing():
    q = question("abstain")
    assert reasons(q, answer("I couldn't find it.", abstained=True)) == ()
    assert reasons(q, answer(f"{RETURNS}. [S1]", BOTH[:1])) == (
        "answered instead of abstaining", "cites refunds-policy.md")
    assert reasons(q, answer("I couldn't find it.", BOTH[:1], abstained=True)) == (
        "cites refunds-policy.md",)


def test_conflict_row_needs_the_conflict_and_every_side_stated():
    q = question("conflict")
    text = f"The sources disagree: {RETURNS}. [S1] {FORUM}. [S2]"
    assert reasons(q, answer(text, BOTH, conflict=CONFLICT)) == ()
    assert reasons(q, answer(text, BOTH)) == ("answered: no conflict",)
    assert reasons(q, answer(f"{RETURNS}. [S1]", BOTH[:1], conflict=CONFLICT)) == (
        "states no variant of side 2 ['90 days', 'three months']",)


def test_conflict_row_must_not_cite_a_not_cite_file():
    text = f"The sources disagree: {RETURNS}. [S1] {FORUM}. [S2]"
    q = question("conflict", not_cite=("forum.md",))
    assert reasons(q, answer(text, BOTH, conflict=CONFLICT)) == ("cites forum.md (not_cite)",)


def test_a_miss_shows_what_came_back_and_the_verdict_when_the_answer_has_one():
    side = {"chunk_id": REFUNDS_CHUNK.chunk_id, "title": "Refunds", "quote": RETURNS,
            "authority": 1.0}
    conflict = CONFLICT.model_copy(update={"sides": (
        ConflictSide(label="S1", document_id="refunds-policy", value="30 days", **side),
        ConflictSide(label="S2", document_id="forum", value="90 days", **side))})
    plain = answer(f"{RETURNS}. [S1] {FORUM}. [S2] " + "x" * 300, BOTH, conflict=conflict)
    q = question("abstain", note="Nothing in the KB says this.")
    shown = miss(q, plain, judge(q, plain))
    assert shown["outcome"] == "conflict (flagged)" and shown["verdict"] is None
    assert len(shown["answer"]) == 200 and shown["note"] == "Nothing in the KB says this."
    assert shown["cited"] == ["refunds-policy.md", "forum.md"]
    assert shown["conflict_sides"] == ["30 days (refunds-policy)", "90 days (forum)"]
    with_verdict = plain.model_copy(update={"verdict": verdict("nothing_answers")})
    shown = miss(q, with_verdict, judge(q, with_verdict))["verdict"]
    assert (shown["stage"], shown["reason"]) == ("relevance", "nothing_answers")
    assert shown["explanation"].startswith("Abstained at the relevance stage")


# --- the dataset -------------------------------------------------------------------------------


def test_the_mini_dataset_loads_with_every_expectation_per_kb():
    data = load_support(MINI)
    assert [kb.name for kb in data.kbs] == ["bike-shop", "tax-help"]
    for kb in data.kbs:
        assert {q.expect for q in kb.questions} == {"answer", "abstain", "conflict"}
        assert "questions.jsonl" not in kb.documents
        assert {d.rsplit(".", 1)[1] for d in kb.documents} == {"md", "txt", "html"}
    assert load_support(MINI, ["tax-help"]).describe()["kbs"] == {"tax-help": 10}


@pytest.fixture
def mini(tmp_path):
    dest = tmp_path / "support"
    shutil.copytree(MINI, dest)
    return dest


def rewrite_line(path, n, change):
    lines = path.read_text().splitlines()
    lines[n - 1] = change(lines[n - 1])
    path.write_text("\n".join(lines) + "\n")


def edit_row(**fields):
    return lambda line: json.dumps({**json.loads(line), **fields})


@pytest.mark.parametrize(("change", "message"), [
    (lambda line: line[:-5], "questions.jsonl:2: not a JSON object"),
    (edit_row(cite_any=["no-such-file.md"]), "questions.jsonl:2: question bike-02 names "
                                             "no-such-file.md, not a document of"),
    (edit_row(kb="tax-help"), "questions.jsonl:2: question bike-02 names kb 'tax-help'"),
    (edit_row(expect="maybe"), "questions.jsonl:2: expect: Input should be"),
    (edit_row(category="misc"), "questions.jsonl:2: category 'misc' is not one of"),
    (edit_row(answer_any=[]), "questions.jsonl:2: an answer row needs answer_any and cite_any"),
    (edit_row(id="bike-01"), "question id 'bike-01' appears in both"),
])
def test_a_bad_question_line_is_an_error_naming_the_file_and_line(mini, change, message):
    rewrite_line(mini / "bike-shop" / "questions.jsonl", 2, change)
    with pytest.raises(DatasetError, match="^.*" + message.replace("(", r"\(").replace(
            "[", r"\[")):
        load_support(mini)


def test_a_missing_folder_or_kb_is_an_error(tmp_path, mini):
    with pytest.raises(DatasetError, match="not a folder"):
        load_support(tmp_path / "nowhere")
    with pytest.raises(DatasetError, match="no knowledge base nope"):
        load_support(mini, ["nope"])
    (mini / "tax-help" / "questions.jsonl").unlink()
    with pytest.raises(DatasetError, match="no questions.jsonl"):
        load_support(mini)


# --- the harness -------------------------------------------------------------------------------


def test_the_harness_scores_every_question_of_every_kb(tmp_path):
    options = RunOptions(hashing_settings(tmp_path / "unused"), LexicalClaimScorer(),
                         progress=False)
    run = run_support(load_support(MINI), options)
    assert [r["id"] for r in run.rows] == [f"bike-{i:02}" for i in range(1, 11)] + [
        f"tax-{i:02}" for i in range(1, 11)]
    metrics, decisions = run.tally.metrics(), run.extra["decisions"]
    right = sum(r["right"] for r in run.rows)
    assert decisions["overall"]["all"] == {"right": right, "total": 20}
    assert metrics["decision_accuracy"] == right / 20
    assert decisions["kb"]["bike-shop"]["total"] == decisions["kb"]["tax-help"]["total"] == 10
    assert {k: v["total"] for k, v in decisions["expect"].items()} == {
        "abstain": 4, "answer": 14, "conflict": 2}
    assert sum(v["total"] for v in decisions["category"].values()) == 20
    assert metrics["citation_integrity"] == metrics["quote_validity"] == 1.0
    assert len(run.extra["misses"]) == 20 - right
    for m in run.extra["misses"]:
        assert {"id", "question", "expected", "outcome", "answer", "cited", "conflict_sides",
                "note", "verdict", "reasons"} <= set(m)
    # Only the documents are ingested: never questions.jsonl.
    assert {k: v["documents"] for k, v in run.extra["ingested"].items()} == {
        "bike-shop": 5, "tax-help": 4}
    off_topic = next(r for r in run.rows if r["id"] == "bike-08")
    assert off_topic["right"] and off_topic["outcome"] == "abstained"
    assert not (tmp_path / "unused").exists()  # each KB had a temporary home of its own


def test_limit_takes_the_first_questions_of_each_kb_and_homes_are_kept(tmp_path):
    options = RunOptions(hashing_settings(tmp_path / "unused"), LexicalClaimScorer(),
                         progress=False, limit=2)
    run = run_support(load_support(MINI), options, homes=tmp_path / "homes")
    assert [r["id"] for r in run.rows] == ["bike-01", "bike-02", "tax-01", "tax-02"]
    assert sorted(p.name for p in (tmp_path / "homes").iterdir()) == ["bike-shop", "tax-help"]


# --- through the CLI ---------------------------------------------------------------------------


def citadel_eval(tmp_path, *args, embedder="hashing", env_dataset=None):
    env = {**os.environ, "CITADEL_HOME": str(tmp_path / "home")}
    env.pop("CITADEL_EMBEDDER", None)
    env.pop("CITADEL_SUPPORT_DATASET", None)
    if embedder:
        env["CITADEL_EMBEDDER"] = embedder
    if env_dataset:
        env["CITADEL_SUPPORT_DATASET"] = str(env_dataset)
    return subprocess.run([sys.executable, "-m", "citadel", "eval", "--suite", "support",
                           "--quiet", "--out", str(tmp_path / "out"), *args],
                          capture_output=True, text=True, env=env, timeout=600, cwd=ROOT)


def test_cli_runs_a_subset_and_writes_the_report(tmp_path):
    proc = citadel_eval(tmp_path, "--kb", "tax-help", "--limit", "3", "--check",
                        env_dataset=MINI)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["suite"] == "support" and results["dataset"]["kbs"] == {"tax-help": 10}
    assert results["decisions"]["overall"]["all"]["total"] == 3
    assert [json.loads(line)["id"] for line in
            (tmp_path / "out" / "rows.jsonl").read_text().splitlines()] == [
        "tax-01", "tax-02", "tax-03"]
    page = (tmp_path / "out" / "report.html").read_text()
    assert "<h2>Decisions</h2>" in page and "Misses (" in page
    assert "## Decisions" in (tmp_path / "out" / "GROUNDED_EVAL.md").read_text()


@pytest.mark.parametrize(("setup", "message"), [
    (lambda d: shutil.rmtree(d), "support dataset not found"),
    (lambda d: rewrite_line(d / "bike-shop" / "questions.jsonl", 3, lambda line: "{oops"),
     "bike-shop/questions.jsonl:3: not a JSON object"),
    (lambda d: rewrite_line(d / "tax-help" / "questions.jsonl", 1,
                            edit_row(not_cite=["gone.html"])),
     "tax-help/questions.jsonl:1: question tax-01 names gone.html, not a document"),
])
def test_cli_bad_dataset_is_a_clear_error_without_traceback(tmp_path, mini, setup, message):
    setup(mini)
    proc = citadel_eval(tmp_path, "--dataset", str(mini))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr


def test_cli_without_a_dataset_says_how_to_give_one(tmp_path):
    proc = citadel_eval(tmp_path)
    assert proc.returncode == 1 and "CITADEL_SUPPORT_DATASET" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = citadel_eval(tmp_path, "--kb", "nope", env_dataset=MINI)
    assert proc.returncode == 1 and "no knowledge base nope" in proc.stderr


def test_support_suite_on_minilm_keeps_citation_integrity_and_quote_validity(tmp_path):
    """The real MiniLM embedder (the default configuration), the real CLI, `--check`."""
    proc = citadel_eval(tmp_path, "--dataset", str(MINI), "--check", embedder=None)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["embedder"] == "minilm"
    assert results["metrics"]["citation_integrity"] == 1.0
    assert results["metrics"]["quote_validity"] == 1.0
    assert results["decisions"]["overall"]["all"]["total"] == 20
