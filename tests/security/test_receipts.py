"""Citation receipts that cannot be edited, and snapshots that a live server holds.

`citadel verify` re-checks a saved answer against the knowledge base and the engine's own
request log; `kb delete`/`kb gc` refuse a snapshot that a live process serves (a lease).
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from citadel.cli import main
from citadel.config import Settings
from citadel.ingest.pipeline import ingest
from citadel.knowledge.verify import parse_receipts, verify_receipts
from citadel.retrieval.embedders.hashing import HashingEmbedder

QUESTION = "How long do I have to return an item bought in December?"
STALE = "snapshot not active; source changed since"


def run(home: Path, *args: str):
    result = CliRunner().invoke(main, list(args),
                                env={"CITADEL_HOME": str(home), "CITADEL_EMBEDDER": "hashing"})
    assert "Traceback" not in result.output, result.output
    return result


def settings(home: Path) -> Settings:
    return Settings(home=home, embedder="hashing")


def ask(demo_kb: Path, home: Path) -> dict:
    ingest([demo_kb], settings(home), embedder=HashingEmbedder(), progress=False)
    out = run(home, "ask", "--json", QUESTION)
    assert out.exit_code == 0, out.output
    answer = json.loads(out.output)
    assert answer["citations"] and "[S1]" in answer["answer"]
    return answer


def verify(home: Path, tmp_path: Path, answer: dict, *flags: str):
    path = tmp_path / "receipt.json"
    path.write_text(json.dumps(answer))
    return run(home, "verify", *flags, str(path))


def fail_lines(result) -> list[str]:
    return [line for line in result.output.splitlines() if line.startswith("FAIL")]


def test_verify_passes_the_answer_as_the_engine_gave_it(demo_kb, tmp_path):
    home = tmp_path / "home"
    answer = ask(demo_kb, home)
    result = verify(home, tmp_path, answer)
    assert result.exit_code == 0, result.output
    assert not fail_lines(result)


def test_verify_fails_an_answer_whose_text_was_edited(demo_kb, tmp_path):
    home = tmp_path / "home"
    answer = ask(demo_kb, home)
    edited = {**answer, "answer": answer["answer"].replace("2027", "2029").replace(
        "can be returned", "can always be returned")}
    assert edited["answer"] != answer["answer"]
    result = verify(home, tmp_path, edited)
    assert result.exit_code == 1
    assert fail_lines(result) == [
        "FAIL answer: answer differs from the signed receipt",
        "FAIL answer: the answer text differs from what the engine answered for request "
        f"{answer['trace']['request_id']}"]


def test_verify_fails_an_answer_whose_request_is_unknown(demo_kb, tmp_path):
    # Changing the request id to dodge the comparison leaves the text unverifiable: a failure.
    home = tmp_path / "home"
    answer = ask(demo_kb, home)
    edited = {**answer, "answer": "Everything can be returned forever. [S1]",
              "trace": {**answer["trace"], "request_id": "made-up"}}
    result = verify(home, tmp_path, edited)
    assert result.exit_code == 1
    assert "FAIL answer: the answer text cannot be checked: no record of request made-up " \
           "in the request log" in result.output


def test_verify_fails_citations_whose_source_title_or_section_were_edited(demo_kb, tmp_path):
    home = tmp_path / "home"
    answer = ask(demo_kb, home)
    c = answer["citations"][0]
    for field, forged in (("source", "official-policy.pdf"), ("title", "CEO memo"),
                          ("section", "Guarantees"), ("document_id", "refunds-policy")):
        edited = {**answer, "citations": [{**c, field: forged}, *answer["citations"][1:]]}
        # The knowledge base alone catches it (no request log needed) ...
        verdicts = verify_receipts(settings(home), parse_receipts(json.dumps(edited)))
        assert not verdicts[0].ok
        assert verdicts[0].reason.startswith(f"{field} of chunk {c['chunk_id']} is "), \
            verdicts[0].reason
        # ... and the CLI says so, with the signed receipt's account, and exits 1.
        result = verify(home, tmp_path, edited, "--citations-only")
        assert result.exit_code == 1
        assert fail_lines(result) == [
            f"FAIL answer: citations[0].{field} differs from the signed receipt",
            f"FAIL [{c['label']}] {c['chunk_id']} @ {c['snapshot_id']}: {verdicts[0].reason}"]


def test_verify_fails_an_answer_with_a_citation_removed(demo_kb, tmp_path):
    home = tmp_path / "home"
    answer = ask(demo_kb, home)
    label = answer["citations"][0]["label"]
    removed = {**answer, "citations": answer["citations"][1:]}
    result = verify(home, tmp_path, removed, "--citations-only")
    assert result.exit_code == 1
    assert (f"FAIL answer: the answer text cites [{label}] but no citation is labelled "
            f"{label}") in fail_lines(result)
    # With the request log, the removal is named as well.
    assert any("the engine issued" in line for line in fail_lines(verify(home, tmp_path,
                                                                         removed)))


def test_verify_fails_a_citation_no_marker_refers_to_and_a_pseudo_marker(demo_kb, tmp_path):
    home = tmp_path / "home"
    answer = ask(demo_kb, home)
    label = answer["citations"][0]["label"]
    unreferenced = {**answer, "answer": answer["answer"].replace(f" [{label}]", "")}
    result = verify(home, tmp_path, unreferenced, "--citations-only")
    assert result.exit_code == 1
    assert (f"FAIL answer: citation {label} is not referred to by any marker in the answer "
            "text") in fail_lines(result)
    pseudo = {**answer, "answer": answer["answer"] + " Refunds are instant [Source: ceo.pdf]."}
    result = verify(home, tmp_path, pseudo)
    assert result.exit_code == 1
    assert any("the answer text differs" in line for line in fail_lines(result))


def test_verify_reports_a_stale_receipt_apart_from_a_forged_quote(demo_kb, tmp_path):
    home = tmp_path / "home"
    answer = ask(demo_kb, home)
    c = answer["citations"][0]
    source = demo_kb / c["source"]
    source.write_text(source.read_text().replace("31 January 2027", "15 January 2027"))
    ingest([demo_kb], settings(home), embedder=HashingEmbedder(), progress=False)
    result = verify(home, tmp_path, answer)
    assert result.exit_code == 1
    line = f"FAIL [{c['label']}] {c['chunk_id']} @ {c['snapshot_id']}: {STALE}: "
    assert any(x.startswith(line) for x in fail_lines(result)), result.output
    forged = {**answer, "citations": [{**c, "quote": c["quote"].replace("31", "30")}]}
    result = verify(home, tmp_path, forged, "--citations-only")
    assert result.exit_code == 1
    assert STALE not in result.output and "not the quote" in result.output


# --- leases: a snapshot a live server serves is not deleted underneath it ---------------

SERVE = """
import sys, time
from pathlib import Path
from citadel.config import Settings
from citadel.server.provider import EngineProvider
provider = EngineProvider(Settings(home=Path(sys.argv[1]), embedder="hashing"))
print(provider.get().index.snapshot_id, flush=True)
time.sleep(600)
"""


def test_kb_delete_and_gc_refuse_a_snapshot_a_live_server_serves(demo_kb, tmp_path):
    import os
    import signal
    import subprocess
    import sys

    home = tmp_path / "home"
    ingest([demo_kb], settings(home), embedder=HashingEmbedder(), progress=False)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    server = subprocess.Popen([sys.executable, "-c", SERVE, str(home)], env=env,
                              stdout=subprocess.PIPE, text=True)
    try:
        served = server.stdout.readline().strip()
        assert served.startswith("kb-")
        (demo_kb / "new.md").write_text("# New\n\nA new policy about parcels.\n")
        ingest([demo_kb], settings(home), embedder=HashingEmbedder(), progress=False)
        result = run(home, "kb", "delete", served)
        assert result.exit_code == 1
        assert (f"refusing to delete {served}: it is being served by pid {server.pid} on "
                in result.output), result.output
        result = run(home, "kb", "gc", "--keep", "0")
        assert result.exit_code == 0 and f"deleted snapshot {served}" not in result.output
        assert f"kept: {served}: it is being served by pid {server.pid}" in result.output
        listed = json.loads(run(home, "kb", "list", "--json").output)
        assert [r["served_by"] != [] for r in listed if r["snapshot_id"] == served] == [True]
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait()
    # The holder died (kill -9, no clean-up): its lease is ignored.
    result = run(home, "kb", "delete", served)
    assert result.exit_code == 0, result.output
    assert f"deleted snapshot {served}" in result.output


def test_kb_delete_force_is_needed_for_a_holder_on_another_host(demo_kb, tmp_path):
    # A lease from another host (shared CITADEL_HOME) cannot be checked with a pid: it is
    # honoured until an operator who knows that server is gone forces the delete.
    import sqlite3

    home = tmp_path / "home"
    ingest([demo_kb], settings(home), embedder=HashingEmbedder(), progress=False)
    (demo_kb / "new.md").write_text("# New\n\nA new policy about parcels.\n")
    old = json.loads(run(home, "kb", "list", "--json").output)[0]["snapshot_id"]
    ingest([demo_kb], settings(home), embedder=HashingEmbedder(), progress=False)
    with sqlite3.connect(home / "catalog.sqlite") as db:
        db.execute("INSERT INTO leases VALUES ('t1', ?, 4242, 'other-host', NULL, "
                   "'citadel HTTP server', '2026-12-04T03:00:00+00:00')", (old,))
    refused = run(home, "kb", "delete", old)
    assert refused.exit_code == 1
    assert "being served by pid 4242 on other-host (citadel HTTP server" in refused.output
    forced = run(home, "kb", "delete", "--force", old)
    assert forced.exit_code == 0 and f"deleted snapshot {old}" in forced.output
