"""A running server serves what `/readyz` says, follows the alias, and never serves damage.

Hot reload: when `active` switches (an ingest, `kb activate`, `kb rollback`) the server
switches too, without a restart, once the new snapshot passes readiness; until then it keeps
the old one and says so. Readiness opens the snapshot's files (dense matrix, chunk database,
lexical index), so a truncated one is refused with its name instead of a 500 later.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from citadel.cli import main
from citadel.config import Settings
from citadel.ingest.pipeline import ingest
from citadel.knowledge.readiness import readiness
from citadel.knowledge.snapshots import Catalog
from citadel.retrieval.embedders.hashing import HashingEmbedder
from citadel.server import create_app

QUESTION = "How long do I have to return an item?"
PARCELS = "Which carrier delivers parcels to Iceland?"


def settings(home: Path) -> Settings:
    return Settings(home=home, embedder="hashing")


def build(kb: Path, home: Path) -> str:
    ingest([kb], settings(home), embedder=HashingEmbedder(), progress=False)
    active = Catalog(home).alias()
    assert active is not None
    return active


def add_parcels_policy(kb: Path) -> None:
    (kb / "parcels.md").write_text(
        "# Parcels\n\n## Iceland\n\nParcels to Iceland are delivered by Posturinn within "
        "ten working days.\n")


def kb_cli(home: Path, *args: str):
    result = CliRunner().invoke(main, ["kb", *args],
                                env={"CITADEL_HOME": str(home), "CITADEL_EMBEDDER": "hashing"})
    assert "Traceback" not in result.output, result.output
    return result


def wait_for_check() -> None:
    """Past the default `snapshot_check_seconds` (1 s): the next request checks the alias."""
    time.sleep(1.1)


def test_server_switches_to_a_newly_active_snapshot_without_restart(demo_kb, tmp_path):
    home = tmp_path / "home"
    first = build(demo_kb, home)
    with TestClient(create_app(settings(home)), base_url="http://localhost") as client:
        assert client.get("/readyz").json()["snapshot_id"] == first
        add_parcels_policy(demo_kb)
        second = build(demo_kb, home)
        wait_for_check()
        ready = client.get("/readyz")
        assert ready.status_code == 200, ready.json()
        assert ready.json()["snapshot_id"] == second
        assert ready.json()["serving_active"] is True
        answer = client.post("/v1/answer", json={"question": PARCELS}).json()
        assert answer["citations"] and {c["snapshot_id"] for c in answer["citations"]} == {
            second}
        assert answer["citations"][0]["document_id"] == "parcels"
        # A rollback is followed the same way.
        assert kb_cli(home, "rollback").exit_code == 0
        wait_for_check()
        assert client.get("/readyz").json()["snapshot_id"] == first
        answer = client.post("/v1/answer", json={"question": QUESTION}).json()
        assert {c["snapshot_id"] for c in answer["citations"]} == {first}


def test_server_releases_the_old_snapshot_after_the_drain(demo_kb, tmp_path):
    home = tmp_path / "home"
    first = build(demo_kb, home)
    quick = Settings(home=home, embedder="hashing", snapshot_check_seconds=0,
                     snapshot_drain_seconds=0)
    with TestClient(create_app(quick), base_url="http://localhost") as client:
        assert client.get("/readyz").json()["snapshot_id"] == first
        add_parcels_policy(demo_kb)
        second = build(demo_kb, home)
        assert client.get("/readyz").json()["snapshot_id"] == second
        deadline = time.monotonic() + 10
        while Catalog(home).leases(first) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert Catalog(home).leases(first) == []
        assert [h.pid for h in Catalog(home).leases(second)] == [os.getpid()]
        assert kb_cli(home, "delete", first).exit_code == 0
        assert client.post("/v1/answer", json={"question": QUESTION}).status_code == 200


def test_server_keeps_serving_the_old_snapshot_when_the_new_active_one_is_not_ready(
    demo_kb, tmp_path
):
    home = tmp_path / "home"
    first = build(demo_kb, home)
    with TestClient(create_app(settings(home)), base_url="http://localhost") as client:
        assert client.get("/readyz").status_code == 200
        add_parcels_policy(demo_kb)
        second = build(demo_kb, home)
        dense = home / "snapshots" / second / "dense.npy"
        with dense.open("r+b") as fh:
            fh.truncate(dense.stat().st_size // 2)
        wait_for_check()
        ready = client.get("/readyz")
        body = ready.json()
        assert ready.status_code == 503
        assert body["snapshot_id"] == first and body["active_snapshot_id"] == second
        assert body["serving_active"] is False
        assert body["reason"].startswith(f"the active snapshot {second} is not ready: ")
        assert "dense.npy" in body["reason"] and body["reason"].endswith(
            f"still serving {first}")
        # Answers keep coming from the snapshot that is served, and say so.
        answer = client.post("/v1/answer", json={"question": QUESTION})
        assert answer.status_code == 200
        assert {c["snapshot_id"] for c in answer.json()["citations"]} == {first}


def _truncate(path: Path) -> None:
    with path.open("r+b") as fh:
        fh.truncate(path.stat().st_size // 2)


def _largest(folder: Path) -> Path:
    return max((p for p in folder.iterdir() if p.is_file()), key=lambda p: p.stat().st_size)


@pytest.mark.parametrize("damaged", ["dense.npy", "chunks.sqlite", "lexical"])
def test_readiness_refuses_a_truncated_snapshot_file(demo_kb, tmp_path, damaged):
    home = tmp_path / "home"
    snapshot = build(demo_kb, home)
    folder = home / "snapshots" / snapshot
    _truncate(_largest(folder / "lexical") if damaged == "lexical" else folder / damaged)
    state = readiness(settings(home), embedder=HashingEmbedder())
    assert state.ok is False
    assert f"the data of active snapshot {snapshot} is damaged: " in state.reason
    assert damaged in state.reason
    status = kb_cli(home, "status")
    assert status.exit_code == 1 and damaged in status.output
    with TestClient(create_app(settings(home)), base_url="http://localhost") as client:
        ready = client.get("/readyz")
        assert ready.status_code == 503 and damaged in ready.json()["reason"]
        # Refused up front (503 with the reason), never a 500 from the first lookup.
        chunk = client.get("/v1/chunks/refunds-policy#0")
        assert chunk.status_code == 503, chunk.text
        assert damaged in chunk.json()["error"]["message"]


def test_a_switch_hands_the_generator_and_its_model_server_to_the_new_engine(demo_kb, tmp_path):
    """The local generator runs a model server: a snapshot switch keeps it (one model in
    memory), closing the old engine leaves it running, closing the new one stops it."""
    from citadel.server.provider import open_active

    home = tmp_path / "home"
    build(demo_kb, home)
    old = open_active(settings(home), None)
    closed = []
    old.generator.close = lambda: closed.append("generator")  # stands for the server's stop
    add_parcels_policy(demo_kb)
    build(demo_kb, home)
    new = open_active(settings(home), old)
    assert new.generator is old.generator and new.embedder is old.embedder
    old.close()
    assert closed == []
    new.close()
    assert closed == ["generator"]
