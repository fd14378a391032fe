"""`citadel verify`: what it prints cannot be driven by the file it checks, a deleted signed
field fails, and a citation's link must be http(s) and, given `--server`, lead to it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from citadel.cli import main
from citadel.engine import Engine
from citadel.knowledge.signing import KeyStore
from citadel.retrieval.embedders.hashing import HashingEmbedder
from tests.doors import ANSWERED, build_doors_kb
from tests.helpers_receipts import format_1_door_answer, with_link

# The lines `citadel verify` writes, and nothing else may start a line.
PREFIXES = ("PASS ", "FAIL ", "GONE ", "UNCHECKED ", "NOTE ", "signature: ",
            "no citations to verify")
HOSTILE = {
    "label": "S1\x1b[2K\rPASS [S1] refunds-policy#1: everything verified\x1b[8m",
    "chunk_id": "refunds-policy#1\nverified\n",
    "snapshot_id": "kb-1\x1b]0;owned\x07\u202e\u009b2J",
}


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    settings = build_doors_kb(tmp_path_factory.mktemp("cli-verify"))
    return settings.home


@pytest.fixture(scope="module")
def answer(home) -> dict:
    result = run(home, "ask", "--json", ANSWERED)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def run(home: Path, *args: str, stdin: str | None = None):
    result = CliRunner().invoke(main, list(args), input=stdin, color=True,
                                env={"CITADEL_HOME": str(home), "CITADEL_EMBEDDER": "hashing"})
    assert "Traceback" not in result.output
    return result


def verify(home: Path, answer: dict, *flags: str):
    return run(home, "verify", *flags, "-", stdin=json.dumps(answer))


@pytest.mark.parametrize("field", sorted(HOSTILE))
def test_fields_from_the_file_are_printed_as_escapes_never_as_terminal_control(
        home, answer, field):
    c = answer["citations"][0]
    hostile = {**answer, "citations": [{**c, field: HOSTILE[field]}, *answer["citations"][1:]]}
    result = verify(home, hostile)
    assert result.exit_code == 1
    out = result.output
    assert not any(ch in out for ch in "\x1b\r\x07\u202e\u009b"), repr(out)
    lines = out.splitlines()
    assert lines[-1] == "NOT verified" and "verified" not in lines[:-1]
    assert all(line.startswith(PREFIXES) or line.endswith("verified against their snapshot")
               for line in lines[:-1]), lines
    assert "\\x1b" in out or "\\n" in out  # shown, readable, inert
    report = verify(home, hostile, "--json")
    assert report.output.isascii() and "\x1b" not in report.output
    assert json.loads(report.output)["ok"] is False


def test_deleting_signed_fields_fails_by_name(home, answer):
    assert verify(home, answer).exit_code == 0
    stripped = {k: v for k, v in answer.items()
                if k not in ("conflict", "span", "sources_consulted")}
    result = verify(home, stripped)
    assert result.exit_code == 1
    lines = result.output.splitlines()
    for name in ("conflict", "sources_consulted", "span"):
        assert f"FAIL answer: {name} was signed but is missing from the answer" in lines
    assert "PASS answer: exactly what was signed" not in lines
    assert lines[-1] == "NOT verified"


def test_a_key_file_others_can_write_is_refused(home, answer, tmp_path):
    keys = tmp_path / "keys.json"
    assert run(home, "keys", "export", "--out", str(keys)).exit_code == 0
    assert verify(home, answer, "--key", str(keys)).exit_code == 0
    keys.chmod(0o666)
    result = verify(home, answer, "--key", str(keys))
    assert result.exit_code == 1
    assert f"`chmod 644 {keys}`" in result.output


# --- links, against a live server ------------------------------------------------------------


@pytest.fixture(scope="module")
def door_record(doors_url) -> dict:
    """The chat door's `citadel` record (as MCP's `answer`): citations with links."""
    response = httpx.post(f"{doors_url}/v1/chat/completions", timeout=60, json={
        "model": "citadel", "messages": [{"role": "user", "content": ANSWERED}]})
    return response.json()["citadel"]


def test_a_doors_signed_links_verify_against_the_server(doors_engine, doors_url, door_record):
    home = doors_engine.settings.home
    result = verify(home, door_record, "--citations-only", "--server", doors_url)
    assert result.exit_code == 0, result.output
    forged = verify(home, with_link(door_record, "https://evil.example/"), "--citations-only")
    assert forged.exit_code == 1
    assert "FAIL answer: citations[0].url differs from the signed receipt" in forged.output


def test_unsigned_links_of_old_receipts_must_be_http_and_on_the_server_given(
        doors_engine, doors_url, tmp_path):
    home = doors_engine.settings.home
    engine = Engine.open(doors_engine.settings, embedder=HashingEmbedder())
    try:
        old = format_1_door_answer(engine.answer(ANSWERED), KeyStore(home), doors_url)
    finally:
        engine.close()
    keys = tmp_path / "keys.json"
    assert run(home, "keys", "export", "--out", str(keys)).exit_code == 0
    label = old["citations"][0]["label"]
    assert verify(home, old, "--citations-only", "--server", doors_url).exit_code == 0
    evil = with_link(old, "https://evil.example/")
    result = verify(home, evil, "--citations-only", "--server", doors_url)
    assert result.exit_code == 1
    assert (f"FAIL answer: the link of citation {label} leads to https://evil.example:443, "
            "not to the server") in result.output
    # Offline the server is not known: the old receipt passes, saying what it does not cover.
    offline = verify(home, evil, "--citations-only", "--key", str(keys))
    assert offline.exit_code == 0
    assert "NOTE citadel-receipt-1: the citations' links were not signed" in offline.output
    script = verify(home, with_link(old, "javascript:alert(1)//"), "--citations-only", "--key",
                    str(keys))
    assert script.exit_code == 1
    assert f"FAIL answer: the link of citation {label} is not an http(s) address" in \
        script.output


def test_a_server_that_is_not_an_http_address_is_a_usage_error(home, answer):
    result = verify(home, answer, "--server", "javascript:alert(1)")
    assert result.exit_code == 2 and "is not an http(s) address" in result.output


def test_umask_does_not_loosen_an_exported_key_file(home, tmp_path):
    old = os.umask(0)
    try:
        assert run(home, "keys", "export", "--out", str(tmp_path / "k.json")).exit_code == 0
    finally:
        os.umask(old)
    assert (tmp_path / "k.json").stat().st_mode & 0o777 == 0o644
