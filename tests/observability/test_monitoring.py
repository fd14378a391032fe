import datetime as dt
import json

import pytest
from click.testing import CliRunner

from citadel.cli import main
from citadel.observability.monitoring import Thresholds, build_report, week_start
from citadel.observability.request_log import CitedChunk, RequestLog
from citadel.records import DroppedCitation
from tests.observability.test_request_log import synthetic

POLICY = CitedChunk(chunk_id="refunds-policy#2", document_id="refunds-policy",
                    title="Refunds", source="refunds-policy.md", authority=1.0)
FORUM = CitedChunk(chunk_id="community-forum-returns#1", document_id="community-forum-returns",
                   title="Forum", source="community-forum-returns.md", authority=0.2)
DROP = DroppedCitation(label="S9", quote="x", reason="label_not_in_context")


def week(start: dt.datetime, n: int, *, cited: float, forum: float = 0.0, abstain: float = 0.0,
         conflict: float = 0.0, dropped: float = 0.0, tag: str = "") -> list:
    """n records spread over one week: shares of cited answers, forum citations, ..."""
    out = []
    for i in range(n):
        when = start + dt.timedelta(hours=i * 168 / n)
        has_citation = i < round(cited * n)
        cite = (FORUM if i < round(forum * n) else POLICY,) if has_citation else ()
        out.append(synthetic(
            f"{tag}{i}", when, citations_emitted=len(cite), cited=cite, grounded=bool(cite),
            abstained=not cite and i < round(cited * n) + round(abstain * n),
            conflict=i < round(conflict * n),
            citations_dropped=(DROP,) if i < round(dropped * n) else ()))
    return out


MONDAY = dt.datetime(2026, 11, 2, tzinfo=dt.UTC)


def test_rates_per_day_and_week():
    records = week(MONDAY, 28, cited=0.75, abstain=0.25, conflict=0.25, dropped=0.5)
    report = build_report(records)
    assert [w.period for w in report.weeks] == ["2026-W45"]
    w = report.weeks[0]
    assert w.requests == 28 and w.citation_rate == 0.75 and w.abstention_rate == 0.25
    assert w.conflict_rate == 0.25 and w.drop_rate == {"label_not_in_context": 0.5}
    assert w.drops == {"label_not_in_context": 14}
    assert len(report.days) == 7 and sum(d.requests for d in report.days) == 28
    assert report.documents[0].document_id == "refunds-policy" and report.documents[0].share == 1
    assert report.alerts == []


def test_alert_when_citation_rate_drops_week_over_week():
    records = (week(MONDAY, 40, cited=0.9, tag="a") + week(MONDAY + dt.timedelta(weeks=1), 40,
                                                           cited=0.9, tag="b")
               + week(MONDAY + dt.timedelta(weeks=2), 40, cited=0.6, tag="c"))
    report = build_report(records, Thresholds(max_citation_drop=0.2))
    assert [(a.kind, a.period) for a in report.alerts] == [("citation_rate_drop", "2026-W47")]
    assert "90%" in report.alerts[0].message and "60%" in report.alerts[0].message
    assert build_report(records, Thresholds(max_citation_drop=0.35)).alerts == []
    # Too few requests to compare: no alert.
    assert build_report(records, Thresholds(max_citation_drop=0.2, min_requests=41)).alerts == []


def test_alert_when_a_low_authority_document_dominates_citations():
    records = (week(MONDAY, 40, cited=1.0, forum=0.1, tag="a")
               + week(MONDAY + dt.timedelta(weeks=1), 40, cited=1.0, forum=0.5, tag="b"))
    report = build_report(records, Thresholds(max_document_share=0.3))
    assert [(a.kind, a.period) for a in report.alerts] == [
        ("low_authority_dominance", "2026-W46")]
    assert "community-forum-returns" in report.alerts[0].message
    # A high-authority document may supply every citation.
    assert build_report(week(MONDAY, 40, cited=1.0)).alerts == []
    # With a lower bar for "low authority", the forum post (0.2) is not low.
    assert build_report(records, Thresholds(low_authority=0.2)).alerts == []


@pytest.fixture
def logged_home(tmp_path, monkeypatch):
    monkeypatch.setenv("CITADEL_HOME", str(tmp_path))
    log = RequestLog(tmp_path / "requests.sqlite", retention_days=0)
    # The two complete weeks before this one (inside the default window of 8 weeks).
    this_week = week_start(dt.datetime.now(dt.UTC))
    for r in (week(this_week - dt.timedelta(weeks=2), 30, cited=0.9, tag="a")
              + week(this_week - dt.timedelta(weeks=1), 30, cited=0.5, forum=0.4, tag="b")):
        log.append(r)
    return tmp_path


def test_monitor_cli_reports_and_check_exits_non_zero(logged_home):
    runner = CliRunner()
    ok = runner.invoke(main, ["monitor", "--min-requests", "5", "--min-citations", "1"])
    assert ok.exit_code == 0, ok.output
    assert "Per week" in ok.output and "ALERTS" in ok.output
    checked = runner.invoke(main, ["monitor", "--check", "--min-requests", "5",
                                   "--min-citations", "1"])
    assert checked.exit_code == 2
    data = json.loads(runner.invoke(main, ["monitor", "--json", "--min-requests", "5",
                                           "--min-citations", "1"]).output)
    assert {a["kind"] for a in data["alerts"]} == {"citation_rate_drop",
                                                   "low_authority_dominance"}
    calm = runner.invoke(main, ["monitor", "--check", "--max-citation-drop", "1",
                                "--max-document-share", "1"])
    assert calm.exit_code == 0 and "No alerts." in calm.output


def test_monitor_without_a_log_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("CITADEL_HOME", str(tmp_path))
    result = CliRunner().invoke(main, ["monitor", "--check"])
    assert result.exit_code == 0 and "0 requests" in result.output


def test_logs_cli_lists_filters_and_shows(tmp_path, monkeypatch):
    monkeypatch.setenv("CITADEL_HOME", str(tmp_path))
    now = dt.datetime.now(dt.UTC)
    log = RequestLog(tmp_path / "requests.sqlite")
    log.append(synthetic(1, now - dt.timedelta(days=3), degraded=True,
                         degraded_reasons=("rerank timeout: no result within 300 ms",)))
    log.append(synthetic(2, now - dt.timedelta(hours=1), abstained=True, grounded=False,
                         citations_emitted=0))
    log.append(synthetic(3, now))
    runner = CliRunner()
    listed = runner.invoke(main, ["logs"])
    assert listed.exit_code == 0
    assert [line.split()[2] for line in listed.stdout.splitlines()] == ["req-1", "req-2",
                                                                        "req-3"]
    degraded = runner.invoke(main, ["logs", "--degraded", "--json"])
    assert [json.loads(line)["request_id"] for line in degraded.stdout.splitlines()] == ["req-1"]
    assert "response" not in json.loads(degraded.stdout.splitlines()[0])
    abstained = runner.invoke(main, ["logs", "--abstained", "--since", "2d"])
    assert [line.split()[2] for line in abstained.stdout.splitlines()] == ["req-2"]
    shown = runner.invoke(main, ["logs", "show", "req-1"])
    assert shown.exit_code == 0 and "rerank timeout" in shown.output
    assert '"answer": 1' in shown.output  # the full response
    as_json = json.loads(runner.invoke(main, ["logs", "show", "req-3", "--json"]).output)
    assert as_json["response"] == {"answer": 3}


def test_logs_cli_finds_requests_by_the_clients_id(tmp_path, monkeypatch):
    """A client's id may name several requests: `show` takes it when it names one, and
    otherwise lists them and asks for a server id."""
    monkeypatch.setenv("CITADEL_HOME", str(tmp_path))
    log = RequestLog(tmp_path / "requests.sqlite")
    log.append(synthetic(1, client_request_id="once"))
    log.append(synthetic(2, client_request_id="twice"))
    log.append(synthetic(3, client_request_id="twice"))
    runner = CliRunner()
    once = runner.invoke(main, ["logs", "show", "once", "--json"])
    assert once.exit_code == 0 and json.loads(once.stdout)["request_id"] == "req-1"
    assert "req-1" in once.stderr and "client request id 'once'" in once.stderr
    twice = runner.invoke(main, ["logs", "show", "twice"])
    assert twice.exit_code != 0 and "Traceback" not in twice.output
    assert "2 requests were sent with the client request id 'twice'" in twice.stderr
    assert "req-2" in twice.stderr and "req-3" in twice.stderr
    by_server_id = runner.invoke(main, ["logs", "show", "req-3", "--json"])
    assert json.loads(by_server_id.stdout)["client_request_id"] == "twice"
    listed = runner.invoke(main, ["logs", "--client-request-id", "twice", "--json"])
    assert [json.loads(line)["request_id"] for line in listed.stdout.splitlines()] == [
        "req-2", "req-3"]


@pytest.mark.parametrize("args,message", [
    (["logs", "show", "nope"], "no request 'nope'"),
    (["logs", "--since", "someday"], "cannot read 'someday'"),
])
def test_logs_cli_bad_input_is_one_line_and_non_zero(tmp_path, monkeypatch, args, message):
    monkeypatch.setenv("CITADEL_HOME", str(tmp_path))
    RequestLog(tmp_path / "requests.sqlite").append(synthetic(1))
    result = CliRunner().invoke(main, args)
    assert result.exit_code != 0 and message in result.output
    assert "Traceback" not in result.output


def test_ask_leaves_a_record_that_logs_and_monitor_read(tmp_path, monkeypatch):
    from tests.conftest import DEMO_KB

    monkeypatch.setenv("CITADEL_HOME", str(tmp_path))
    monkeypatch.setenv("CITADEL_EMBEDDER", "hashing")
    runner = CliRunner()
    assert runner.invoke(main, ["ingest", "-q", str(DEMO_KB)]).exit_code == 0
    asked = runner.invoke(main, ["ask", "--json", "How much does UK express delivery cost?"])
    request_id = json.loads(asked.output)["trace"]["request_id"]
    listed = runner.invoke(main, ["logs", "--json"])
    assert [json.loads(x)["request_id"] for x in listed.stdout.splitlines()] == [request_id]
    shown = json.loads(runner.invoke(main, ["logs", "show", request_id, "--json"]).output)
    assert shown["response"] == json.loads(asked.output)
    report = json.loads(runner.invoke(main, ["monitor", "--json"]).output)
    assert report["requests"] == 1 and report["weeks"][0]["citation_rate"] == 1.0
