import datetime as dt
import io
import json
import sqlite3
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from citadel.answering.generators.extractive import ExtractiveGenerator
from citadel.engine import Engine
from citadel.observability.request_log import RequestLog, RequestRecord, build_record, parse_since

ROOT = Path(__file__).resolve().parents[2]


def synthetic(i: int, when: dt.datetime | None = None, **update) -> RequestRecord:
    base = RequestRecord(
        request_id=f"req-{i}", time=when or dt.datetime.now(dt.UTC), question_sha256="ab" * 32,
        question=f"question {i}", snapshot_id="kb-1", backend="local", strategy="s",
        reranker="none", retrieval_ok=True, rerank_ran=False, degraded=False,
        fallback_used=False, citations_available=True, citations_emitted=1, grounded=True,
        abstained=False, conflict=False, generator="extractive", prompt_version="p1",
        retrieval_config_version="rc-1", latencies_ms={"total": 1.0}, response={"answer": i},
    )
    return base.model_copy(update=update)


def logging_engine(base: Engine, log: RequestLog, **settings) -> Engine:
    return Engine(base.settings.model_copy(update=settings), base.index, base.embedder,
                  ExtractiveGenerator(), request_log=log)


def test_engine_writes_one_complete_record_per_answer(hashing_engine, tmp_path):
    log = RequestLog(tmp_path / "requests.sqlite")
    engine = logging_engine(hashing_engine, log)
    answer = engine.answer("How much does UK express delivery cost?", request_id="abc")
    abstained = engine.answer("What is the capital of France?")
    assert log.count() == 2
    r = log.get("abc")
    t = answer.trace
    assert r.question == "How much does UK express delivery cost?"
    assert r.question_sha256 == t.question_sha256 and r.snapshot_id == t.snapshot_id
    assert (r.backend, r.strategy, r.reranker) == (t.backend, t.strategy, "none")
    assert r.retrieval_ok and not r.rerank_ran and not r.degraded and not r.fallback_used
    assert r.citations_available and r.citations_emitted == len(answer.citations) >= 1
    assert r.grounded and not r.abstained and not r.conflict
    assert (r.generator, r.prompt_version) == ("extractive", "extractive-v2")
    assert r.retrieval_config_version == t.retrieval_config_version
    assert r.latencies_ms == t.latencies_ms and "retrieve" in r.latencies_ms
    assert [c.chunk_id for c in r.cited] == [c.chunk_id for c in answer.citations]
    assert all(c.authority == 1.0 for c in r.cited)  # shipping-policy.md: authority 1.0
    assert r.response == json.loads(answer.model_dump_json())
    summary = log.records()
    assert [x.request_id for x in summary] == ["abc", abstained.trace.request_id]
    assert summary[0].response is None  # summaries leave the response out
    assert summary[1].abstained and summary[1].citations_emitted == 0


def test_dropped_citations_are_recorded_with_reasons(hashing_engine, tmp_path):
    from citadel.records import Draft, DraftCitation, DraftSentence

    class Forging(ExtractiveGenerator):
        def generate(self, question, context):
            draft = super().generate(question, context)
            forged = DraftSentence(text="Refunds take one hour.",
                                   citations=(DraftCitation(label="S9", quote="one hour"),))
            return Draft(sentences=(*draft.sentences, forged), generator=draft.generator,
                         prompt_version=draft.prompt_version)

    log = RequestLog(tmp_path / "requests.sqlite")
    engine = Engine(hashing_engine.settings, hashing_engine.index, hashing_engine.embedder,
                    Forging(), request_log=log)
    engine.answer("How much does UK express delivery cost?", request_id="x")
    reasons = {d.reason for d in log.get("x").citations_dropped}
    assert reasons == {"label_not_in_context", "uncited_sentence"}


def test_questions_can_be_left_out(hashing_engine, tmp_path):
    log = RequestLog(tmp_path / "requests.sqlite")
    engine = logging_engine(hashing_engine, log, log_questions=False)
    grounded = engine.answer("How long are gift cards valid?", request_id="q")
    abstained = engine.answer("What is the capital of France?", request_id="f")
    assert abstained.abstained and "capital of france" in abstained.answer.lower()
    r = log.get("q")
    assert r.question is None and r.question_sha256 == grounded.trace.question_sha256
    assert r.response["answer"] == grounded.answer  # answer text comes from the sources
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("requests.sqlite*")).lower()
    assert b"capital of france" not in raw and b"gift cards valid" not in raw


def test_engine_open_logs_by_default_and_can_be_disabled(tmp_path):
    from citadel.config import Settings
    from citadel.ingest.pipeline import ingest
    from citadel.retrieval.embedders.hashing import HashingEmbedder
    from tests.conftest import DEMO_KB

    settings = Settings(home=tmp_path, embedder="hashing")
    ingest([DEMO_KB / "gift-cards.html"], settings, embedder=HashingEmbedder(), progress=False)
    engine = Engine.open(settings, embedder=HashingEmbedder())
    engine.answer("How long are gift cards valid?")
    assert RequestLog(tmp_path / "requests.sqlite").count() == 1
    off = Engine.open(settings.model_copy(update={"log_requests": False}),
                      embedder=HashingEmbedder())
    assert off.request_log is None


def test_the_log_is_append_only(tmp_path):
    log = RequestLog(tmp_path / "requests.sqlite")
    log.append(synthetic(1))
    conn = sqlite3.connect(tmp_path / "requests.sqlite")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("UPDATE requests SET abstained = 1")
    conn.close()
    assert log.get("req-1").abstained is False


def test_retention_prunes_old_records_and_caps_rows(tmp_path):
    now = dt.datetime.now(dt.UTC)
    log = RequestLog(tmp_path / "r.sqlite", retention_days=7, max_rows=3)
    log.append(synthetic(0, now - dt.timedelta(days=30)))
    log.append(synthetic(1, now - dt.timedelta(days=1)))
    assert [r.request_id for r in log.records()] == ["req-1"]
    for i in range(2, 6):
        log.append(synthetic(i, now))
    assert [r.request_id for r in log.records()] == ["req-3", "req-4", "req-5"]


def test_a_log_failure_never_fails_the_request(hashing_engine, tmp_path):
    (tmp_path / "requests.sqlite").mkdir()  # a directory where the database should be
    engine = logging_engine(hashing_engine, RequestLog(tmp_path / "requests.sqlite"))
    assert engine.answer("How long are gift cards valid?").citations


def test_stdout_json_lines(tmp_path):
    out = io.StringIO()
    log = RequestLog(tmp_path / "r.sqlite", stdout=out)
    log.append(synthetic(1))
    log.append(synthetic(2))
    lines = out.getvalue().splitlines()
    assert [json.loads(line)["request_id"] for line in lines] == ["req-1", "req-2"]
    assert RequestRecord.model_validate_json(lines[0]).response == {"answer": 1}


def test_filters_and_since(tmp_path):
    now = dt.datetime.now(dt.UTC)
    log = RequestLog(tmp_path / "r.sqlite")
    log.append(synthetic(1, now - dt.timedelta(days=3), degraded=True))
    log.append(synthetic(2, now - dt.timedelta(hours=1), abstained=True, grounded=False))
    log.append(synthetic(3, now))
    assert [r.request_id for r in log.records(degraded=True)] == ["req-1"]
    assert [r.request_id for r in log.records(abstained=True)] == ["req-2"]
    assert [r.request_id for r in log.records(since=parse_since("2d", now))] == ["req-2",
                                                                                 "req-3"]
    assert [r.request_id for r in log.records(limit=1)] == ["req-3"]


def test_parse_since_reads_relative_and_iso_times():
    now = dt.datetime(2026, 12, 2, 12, tzinfo=dt.UTC)
    assert parse_since("24h", now) == dt.datetime(2026, 12, 1, 12, tzinfo=dt.UTC)
    assert parse_since("1w", now) == dt.datetime(2026, 11, 25, 12, tzinfo=dt.UTC)
    assert parse_since("2026-12-01", now) == dt.datetime(2026, 12, 1, tzinfo=dt.UTC)
    with pytest.raises(ValueError, match="7d"):
        parse_since("last tuesday", now)


def test_concurrent_writers_in_threads_lose_nothing(tmp_path):
    log = RequestLog(tmp_path / "r.sqlite")
    with ThreadPoolExecutor(max_workers=16) as pool:
        ok = list(pool.map(lambda i: log.append(synthetic(i)), range(400)))
    assert all(ok) and log.count() == 400
    assert len({r.request_id for r in log.records()}) == 400


def test_concurrent_writers_in_two_processes_lose_nothing(tmp_path):
    script = textwrap.dedent(f"""
        import sys
        sys.path[:0] = [{str(ROOT / "src")!r}, {str(ROOT)!r}]
        from concurrent.futures import ThreadPoolExecutor
        from citadel.observability.request_log import RequestLog
        from tests.observability.test_request_log import synthetic
        log = RequestLog({str(tmp_path / "r.sqlite")!r})
        tag = int(sys.argv[1])
        with ThreadPoolExecutor(4) as pool:
            ok = list(pool.map(lambda i: log.append(synthetic(tag * 1000 + i)), range(150)))
        sys.exit(0 if all(ok) else 3)
    """)
    procs = [subprocess.Popen([sys.executable, "-c", script, str(tag)]) for tag in (1, 2)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    log = RequestLog(tmp_path / "r.sqlite")
    assert log.count() == 300 and len({r.request_id for r in log.records()}) == 300
    mode = sqlite3.connect(tmp_path / "r.sqlite").execute("PRAGMA journal_mode").fetchone()
    assert mode == ("wal",)


def test_a_reported_conflict_is_recorded(hashing_engine):
    from citadel.records import Conflict

    answer = logging_engine(hashing_engine, None).answer("How long are gift cards valid?")
    conflicted = answer.model_copy(update={"conflict": Conflict(
        attribute="refund window", values=("30 days", "90 days"),
        chunk_ids=("refunds-policy#2", "community-forum-returns#2"))})
    record = build_record("q", conflicted, {})
    assert record.conflict is True and build_record("q", answer, {}).conflict is False
    assert record.response["conflict"]["values"] == ["30 days", "90 days"]


def test_a_log_from_an_older_schema_is_read_and_extended(tmp_path):
    path = tmp_path / "requests.sqlite"
    RequestLog(path).append(synthetic(1))
    conn = sqlite3.connect(path)
    conn.execute("ALTER TABLE requests DROP COLUMN conflict_resolution")  # as an older Citadel
    conn.commit()
    conn.close()
    old = RequestLog(path)
    assert old.get("req-1").conflict_resolution is None  # read before any write
    assert old.append(synthetic(2, conflict=True, conflict_resolution="flagged"))
    assert [r.conflict_resolution for r in old.records()] == [None, "flagged"]


def test_a_log_from_before_client_request_ids_gains_the_column_and_its_index(tmp_path):
    path = tmp_path / "requests.sqlite"
    RequestLog(path).append(synthetic(1))
    conn = sqlite3.connect(path)
    conn.execute("DROP INDEX requests_client_request_id")
    conn.execute("ALTER TABLE requests DROP COLUMN client_request_id")  # as an older Citadel
    conn.commit()
    conn.close()
    old = RequestLog(path)
    assert old.records(client_request_id="mine") == []  # read before any write
    assert old.append(synthetic(2, client_request_id="mine"))
    assert [r.request_id for r in old.records(client_request_id="mine")] == ["req-2"]
    with sqlite3.connect(path) as conn:
        plan = conn.execute("EXPLAIN QUERY PLAN SELECT * FROM requests "
                            "WHERE client_request_id = 'mine'").fetchall()
    assert "requests_client_request_id" in str(plan)


def test_one_writer_connection_serves_every_record_until_closed(tmp_path):
    log = RequestLog(tmp_path / "requests.sqlite")
    assert log.append(synthetic(1))
    writer = log._writer
    assert writer is not None and log.append(synthetic(2)) and log._writer is writer
    log.close()
    assert log._writer is None
    assert log.append(synthetic(3))  # reopened on demand
    assert log.count() == 3


def test_a_closed_log_records_the_next_answer_on_a_new_connection(hashing_engine, tmp_path):
    log = RequestLog(tmp_path / "requests.sqlite")
    engine = logging_engine(hashing_engine, log)
    engine.answer("How long are gift cards valid?")
    log.close()  # what Engine.close does (a server closes a drained engine)
    assert log._writer is None
    engine.answer("How long are gift cards valid?")
    assert log._writer is not None and log.count() == 2
