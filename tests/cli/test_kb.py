"""`citadel kb ...` and readiness, through the real click commands."""

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from citadel.cli import main
from citadel.config import Settings
from citadel.engine import Engine, NotReady
from citadel.ingest.loaders import load_corpus
from citadel.ingest.pipeline import ingest
from citadel.knowledge.readiness import readiness
from citadel.knowledge.snapshots import Catalog
from citadel.retrieval.embedders.hashing import HashingEmbedder

QUESTION = "How long do I have to return an item?"


def run(home: Path, *args: str, embedder: str = "hashing"):
    result = CliRunner().invoke(main, list(args),
                                env={"CITADEL_HOME": str(home), "CITADEL_EMBEDDER": embedder})
    assert "Traceback" not in result.output
    return result


def answer(home: Path, embedder=None):
    engine = Engine.open(Settings(home=home, embedder="hashing"),
                         embedder=embedder or HashingEmbedder())
    try:
        a = engine.answer(QUESTION)
        return a.answer, a.citations
    finally:
        engine.close()


@pytest.fixture
def two_snapshots(demo_kb, tmp_path):
    """Snapshot A (30 days), then B (45 days) active."""
    home = tmp_path / "home"
    settings = Settings(home=home, embedder="hashing")
    a = ingest([demo_kb], settings, embedder=HashingEmbedder(), progress=False).snapshot_id
    answer_a = answer(home)
    policy = demo_kb / "refunds-policy.md"
    policy.write_text(policy.read_text().replace("30 days", "45 days"))
    b = ingest([demo_kb], settings, embedder=HashingEmbedder(), progress=False).snapshot_id
    return home, a, b, answer_a


def test_list_json_and_table_mark_the_active_snapshot(two_snapshots, demo_kb):
    home, a, b, _ = two_snapshots
    rows = json.loads(run(home, "kb", "list", "--json").output)
    assert [(r["snapshot_id"], r["state"], r["active"]) for r in rows] == [
        (a, "complete", False), (b, "complete", True)]
    assert rows[1]["documents"] == len(load_corpus([demo_kb]).documents) and rows[1]["chunks"]
    assert rows[1]["embedder"]["model"] == "hashing-v1" and rows[1]["created_at"]
    table = run(home, "kb", "list").output.splitlines()
    assert table[0].split()[:6] == ["ID", "STATE", "CREATED", "DOCS", "CHUNKS", "EMBEDDER"]
    assert any(line.startswith(f"* {b}") for line in table)
    assert any(line.startswith(f"  {a}") for line in table)


def test_status_json_names_the_active_snapshot_and_readiness(two_snapshots):
    home, _, b, _ = two_snapshots
    result = run(home, "kb", "status", "--json")
    assert result.exit_code == 0
    status = json.loads(result.output)
    assert status["active"] == b and status["ready"] is True
    assert status["snapshot"]["state"] == "complete" and status["manifest"].endswith(
        f"{b}/manifest.json")
    text = run(home, "kb", "status")
    assert f"active:  {b}" in text.output and "ready:   yes" in text.output


def test_status_reports_not_ready_with_the_differing_field(two_snapshots):
    home, _, b, _ = two_snapshots
    result = run(home, "kb", "status", "--json", embedder="minilm")
    assert result.exit_code == 1
    status = json.loads(result.output)
    assert status["active"] == b and status["ready"] is False
    assert any(d.startswith("embedder.model:") for d in status["differences"])
    assert "Re-ingest (`citadel ingest PATH`)" in status["reason"]  # says what to do
    empty = run(home.parent / "nothing", "kb", "status", "--json")
    assert empty.exit_code == 1 and json.loads(empty.output)["active"] is None


def test_rollback_restores_previous_answers_and_activate_switches_back(two_snapshots):
    home, a, b, answer_a = two_snapshots
    answer_b = answer(home)
    assert answer_a[1] and answer_b[1] and answer_b != answer_a
    assert {c.snapshot_id for c in answer_a[1]} == {a}
    assert {c.snapshot_id for c in answer_b[1]} == {b}
    result = run(home, "kb", "rollback")
    assert result.exit_code == 0 and a in result.output
    assert Catalog(home).alias() == a
    assert answer(home) == answer_a  # same answer, same citations (snapshot id included)
    result = run(home, "kb", "activate", b[:8])  # an unambiguous prefix is enough
    assert result.exit_code == 0 and Catalog(home).alias() == b
    assert answer(home) == answer_b


def test_activation_refuses_incompatible_snapshot_naming_the_field(two_snapshots):
    home, a, b, _ = two_snapshots
    result = run(home, "kb", "activate", a, embedder="minilm")
    assert result.exit_code == 1
    assert "embedder.model: snapshot has 'hashing-v1'" in result.output
    assert "embedder.dimension" in result.output and "embedder.provider" in result.output
    assert Catalog(home).alias() == b
    rollback = run(home, "kb", "rollback", embedder="minilm")
    assert rollback.exit_code == 1 and "embedder.model" in rollback.output
    assert Catalog(home).alias() == b


def test_activation_refuses_incomplete_snapshot(two_snapshots, demo_kb):
    home, a, b, _ = two_snapshots
    (demo_kb / "extra.md").write_text("# Extra\n\nA new page.\n")

    def crash(stage: str) -> None:
        if stage == "validate":
            raise RuntimeError("power cut")

    with pytest.raises(RuntimeError):
        ingest([demo_kb], Settings(home=home, embedder="hashing"), embedder=HashingEmbedder(),
               progress=False, fault=crash)
    failed = next(s for s in Catalog(home).list() if s.state == "failed")
    result = run(home, "kb", "activate", failed.snapshot_id)
    assert result.exit_code == 1 and "is failed, not complete" in result.output
    assert Catalog(home).alias() == b


def test_delete_refuses_the_active_snapshot_and_deletes_an_inactive_one(two_snapshots):
    home, a, b, _ = two_snapshots
    result = run(home, "kb", "delete", b)
    assert result.exit_code == 1
    assert f"refusing to delete the active snapshot {b}" in result.output
    assert (home / "snapshots" / b).is_dir() and Catalog(home).get(b).state == "complete"
    result = run(home, "kb", "delete", a)
    assert result.exit_code == 0
    assert Catalog(home).get(a) is None and not (home / "snapshots" / a).exists()
    rollback = run(home, "kb", "rollback")
    assert rollback.exit_code == 1 and "does not exist" in rollback.output


def test_gc_keeps_active_and_newest(two_snapshots, demo_kb):
    home, a, b, _ = two_snapshots
    run(home, "kb", "rollback")  # A active, B newer
    (demo_kb / "extra.md").write_text("# Extra\n\nA new page.\n")
    c = ingest([demo_kb], Settings(home=home, embedder="hashing"), embedder=HashingEmbedder(),
               progress=False, activate=False).snapshot_id
    result = run(home, "kb", "gc", "--keep", "1")
    assert result.exit_code == 0, result.output
    assert f"deleted snapshot {b}" in result.output
    assert {s.snapshot_id for s in Catalog(home).list()} == {a, c}
    assert run(home, "kb", "gc", "--keep", "0").exit_code == 0
    assert [s.snapshot_id for s in Catalog(home).list()] == [a]  # never the active one
    assert Catalog(home).alias() == a and answer(home)[1]


def test_engine_refuses_incompatible_or_missing_snapshot(two_snapshots):
    home, _, b, _ = two_snapshots
    settings = Settings(home=home, embedder="hashing")
    assert readiness(settings).ok
    with pytest.raises(NotReady, match="embedder.dimension"):
        Engine.open(settings, embedder=HashingEmbedder(dimension=64))
    shutil.rmtree(home / "snapshots" / b)
    state = readiness(settings)
    assert not state.ok and state.active == b and "missing" in state.reason
    with pytest.raises(NotReady, match="missing"):
        Engine.open(settings, embedder=HashingEmbedder())
