"""A build that dies at any moment leaves the previous active snapshot serving, untouched,
and the half-built snapshot can be rebuilt."""

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from citadel.config import Settings
from citadel.engine import Engine
from citadel.ingest.pipeline import STAGES, ingest
from citadel.knowledge.snapshot_admin import gc, list_snapshots
from citadel.knowledge.snapshots import Catalog
from citadel.retrieval.embedders.hashing import HashingEmbedder

QUESTIONS = (
    "How long do I have to return an item?",
    "How long are gift cards valid?",
    "How much does UK express delivery cost?",
)


class Crash(Exception):
    pass


def settings_for(home: Path) -> Settings:
    return Settings(home=home, embedder="hashing")


def answers(home: Path) -> list[tuple]:
    """What the active snapshot says: answer text and full citations, per question."""
    engine = Engine.open(settings_for(home), embedder=HashingEmbedder())
    try:
        out = []
        for q in QUESTIONS:
            a = engine.answer(q)
            out.append((a.answer, a.citations, a.trace.snapshot_id))
        return out
    finally:
        engine.close()


def snapshot_tree(home: Path, snapshot_id: str) -> dict[str, bytes]:
    root = home / "snapshots" / snapshot_id
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


@pytest.fixture
def served(demo_kb, tmp_path):
    """A home whose active snapshot is the demo KB, and what it answers."""
    home = tmp_path / "home"
    report = ingest([demo_kb], settings_for(home), embedder=HashingEmbedder(), progress=False)
    return home, report.snapshot_id, answers(home)


@pytest.mark.parametrize("stage", STAGES)
def test_crash_before_any_stage_leaves_old_snapshot_serving_then_rebuild_succeeds(
    served, demo_kb, stage
):
    home, old_id, before = served
    old_files = snapshot_tree(home, old_id)
    (demo_kb / "refunds-policy.md").write_text(
        (demo_kb / "refunds-policy.md").read_text().replace("30 days", "45 days"))

    def fault(name: str) -> None:
        if name == stage:
            raise Crash(name)

    with pytest.raises(Crash):
        ingest([demo_kb], settings_for(home), embedder=HashingEmbedder(), progress=False,
               fault=fault)
    catalog = Catalog(home)
    assert catalog.alias() == old_id
    assert answers(home) == before
    assert snapshot_tree(home, old_id) == old_files  # untouched, byte for byte
    new_states = {s.snapshot_id: s.state for s in catalog.list() if s.snapshot_id != old_id}
    if STAGES.index(stage) < STAGES.index("embed"):
        assert new_states == {}  # nothing recorded before the build began
    elif stage == "activate":
        assert list(new_states.values()) == ["complete"]  # built, just not switched to
    else:
        assert list(new_states.values()) == ["failed"]

    report = ingest([demo_kb], settings_for(home), embedder=HashingEmbedder(), progress=False)
    assert report.activated and catalog.alias() == report.snapshot_id != old_id
    assert catalog.get(report.snapshot_id).state == "complete"
    engine = Engine.open(settings_for(home), embedder=HashingEmbedder())
    try:
        assert engine.index.snapshot_id == report.snapshot_id
        assert "45 days" in engine.index.get_document("refunds-policy").text
    finally:
        engine.close()


def _write_corpus(root: Path, n: int) -> None:
    """n generated notes: enough text that a hashing-embedder build takes seconds."""
    import random

    rng = random.Random(7)
    words = ["refund", "shipping", "order", "delivery", "warranty", "parcel", "customer",
             "invoice", "account", "payment", "courier", "label", "exchange", "voucher"]
    root.mkdir(parents=True)
    for i in range(n):
        body = " ".join(
            " ".join(rng.choice(words) for _ in range(12)).capitalize() + "." for _ in range(20)
        )
        (root / f"note-{i:04d}.md").write_text(f"# Note {i}\n\n{body}\n")


def _spawn_ingest(home: Path, corpus: Path) -> subprocess.Popen:
    env = {**os.environ, "CITADEL_HOME": str(home), "CITADEL_EMBEDDER": "hashing"}
    return subprocess.Popen([sys.executable, "-m", "citadel", "ingest", "-q", str(corpus)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _kill_when(proc: subprocess.Popen, ready, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the build never reached the kill point"
        time.sleep(0.002)
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def _building_ids(home: Path, old_id: str) -> list[str]:
    try:
        with sqlite3.connect(home / "catalog.sqlite", timeout=5) as db:
            rows = db.execute("SELECT snapshot_id FROM snapshots WHERE state='building'")
            return [r[0] for r in rows if r[0] != old_id]
    except sqlite3.Error:
        return []


def test_sigkill_mid_build_leaves_old_snapshot_serving_and_rebuild_succeeds(
    served, demo_kb, tmp_path
):
    home, old_id, before = served
    old_files = snapshot_tree(home, old_id)
    corpus = tmp_path / "big"
    _write_corpus(corpus, 500)

    def staging_dirs() -> set[str]:
        return {p.name for p in (home / "snapshots").iterdir() if p.name.startswith(".kb-")}

    def new_staging_dir() -> bool:
        return bool(staging_dirs() - earlier)

    # Kill once while it embeds (as soon as its `building` row exists), once while it writes
    # (as soon as a new staging directory appears).
    for kill_point in (lambda: bool(_building_ids(home, old_id)), new_staging_dir):
        earlier = staging_dirs()
        proc = _spawn_ingest(home, corpus)
        # A build analyses every chunk (spaCy) before it writes: allow a loaded machine time
        # to reach the write.
        _kill_when(proc, kill_point, timeout=600)
        assert proc.returncode == -signal.SIGKILL
        catalog = Catalog(home)
        assert catalog.alias() == old_id
        assert answers(home) == before  # same answers, same citations
        assert snapshot_tree(home, old_id) == old_files
        (new_id,) = _building_ids(home, old_id)  # left behind mid-build
        rows = {r.info.snapshot_id: r for r in list_snapshots(settings_for(home))}
        assert rows[new_id].stale and not rows[new_id].building_now

    report = ingest([corpus], settings_for(home), embedder=HashingEmbedder(), progress=False)
    assert report.snapshot_id == new_id and not report.reused and report.activated
    assert Catalog(home).get(new_id).state == "complete"
    # The killed write left a staging directory; gc removes it, and keeps both snapshots.
    assert staging_dirs()
    result = gc(settings_for(home), keep=5)
    assert result.deleted == () and not staging_dirs()
    assert set(result.kept) == {old_id, new_id}


def test_concurrent_ingests_of_one_corpus_build_it_once(demo_kb, tmp_path):
    home = tmp_path / "home"
    reports, errors = [], []

    def run() -> None:
        try:
            reports.append(ingest([demo_kb], settings_for(home), embedder=HashingEmbedder(),
                                  progress=False))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len({r.snapshot_id for r in reports}) == 1
    assert sorted(r.reused for r in reports) == [False, True, True]
    assert [s.state for s in Catalog(home).list()] == ["complete"]
