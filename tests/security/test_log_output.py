"""`citadel logs` prints what clients sent: control characters must not reach the terminal."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from click.testing import CliRunner

from citadel.cli import main
from citadel.observability.request_log import RequestLog
from tests.observability.test_request_log import synthetic

# Set the window title, clear the screen, return to column 0 and overwrite, an 8-bit CSI, a
# right-to-left override, a NUL and a newline that would fake a second record.
HOSTILE = ("\x1b]0;pwned\x07\x1b[2J\rall fine \x9b31m red \u202eevil\x00\n"
           "2026-01-01 00:00:00  req-x")
ESCAPED = ("\\x1b]0;pwned\\x07\\x1b[2J\\rall fine \\x9b31m red \\u202eevil\\x00\\n"
           "2026-01-01 00:00:00  req-x")


def _unsafe(text: str) -> list[str]:
    return [c for c in text if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) <= 0x9f
            or c == "\u202e"]


@pytest.fixture
def hostile_log(tmp_path, monkeypatch):
    monkeypatch.setenv("CITADEL_HOME", str(tmp_path))
    log = RequestLog(tmp_path / "requests.sqlite")
    log.append(synthetic(1, dt.datetime.now(dt.UTC), question=HOSTILE[:50],
                         response={"answer": HOSTILE, "question": HOSTILE}))
    log.append(synthetic(2, dt.datetime.now(dt.UTC), question=HOSTILE))
    return log


def test_logs_escapes_control_characters_in_questions(hostile_log):
    result = CliRunner().invoke(main, ["logs"])
    assert result.exit_code == 0
    assert _unsafe(result.stdout) == []
    lines = result.stdout.splitlines()
    assert len(lines) == 2  # a newline in a question cannot fake a record
    for line in lines:
        assert "  \\x1b]0;pwned\\x07\\x1b[2J\\rall fine \\x9b31m red " in line
    assert "\\u202eevil\\x00\\n" in lines[0]


def test_logs_show_escapes_control_characters_in_question_and_response(hostile_log):
    for args in (["logs", "show", "req-1"], ["logs", "show", "req-1", "--json"],
                 ["logs", "--json"]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        assert _unsafe(result.stdout) == [], args
    shown = CliRunner().invoke(main, ["logs", "show", "req-2"]).stdout
    assert f"question: {ESCAPED}" in shown
    record = json.loads(CliRunner().invoke(main, ["logs", "show", "req-1", "--json"]).stdout)
    assert record["response"]["answer"] == HOSTILE  # JSON still carries the exact text
