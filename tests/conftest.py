from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from citadel.config import Settings
from citadel.engine import Engine
from citadel.ingest.pipeline import ingest
from citadel.retrieval.embedders.hashing import HashingEmbedder

ROOT = Path(__file__).resolve().parents[1]
DEMO_KB = ROOT / "examples" / "support-kb"


@pytest.fixture
def demo_kb(tmp_path: Path) -> Path:
    """A private copy of the demo knowledge base, free to modify."""
    dest = tmp_path / "kb"
    shutil.copytree(DEMO_KB, dest)
    return dest


def hashing_settings(home: Path, **overrides) -> Settings:
    return Settings(home=home, embedder="hashing", **overrides)


@pytest.fixture(scope="session")
def hashing_engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    """The demo KB ingested with the fast hashing embedder, shared read-only by tests."""
    home = tmp_path_factory.mktemp("home")
    settings = hashing_settings(home)
    ingest([DEMO_KB], settings, embedder=HashingEmbedder(), progress=False)
    engine = Engine.open(settings, embedder=HashingEmbedder())
    yield engine
    engine.close()


@pytest.fixture(scope="session")
def minilm_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo KB ingested with the real MiniLM embedder (the default configuration)."""
    home = tmp_path_factory.mktemp("minilm-home")
    ingest([DEMO_KB], Settings(home=home), progress=False)
    return home


@pytest.fixture(scope="session")
def postgres_dsn() -> str:
    """DSN of the throwaway PostgreSQL + pgvector server that `make test` starts."""
    import os

    dsn = os.environ.get("CITADEL_TEST_POSTGRES_DSN")
    if not dsn:
        pytest.skip("no PostgreSQL: run the suite with `make test` (starts scripts/postgres.sh)")
    return dsn


@pytest.fixture(scope="session")
def make_postgres_database(postgres_dsn: str):
    """Creates databases of this test session's own on the test server (other runs and
    worktrees may share the server); all are dropped at the end. Returns their DSNs."""
    import uuid

    import psycopg
    from psycopg import sql
    from psycopg.conninfo import make_conninfo

    admin = make_conninfo(postgres_dsn, dbname="postgres")
    names: list[str] = []

    def make() -> str:
        name = f"citadel_test_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        names.append(name)
        return make_conninfo(postgres_dsn, dbname=name)

    yield make
    with psycopg.connect(admin, autocommit=True) as conn:
        for name in names:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                sql.Identifier(name)))


@pytest.fixture(scope="session")
def postgres_database(make_postgres_database) -> str:
    """DSN of a database for this session's shared PostgreSQL fixtures."""
    return make_postgres_database()


@pytest.fixture(scope="session")
def documents_engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    """The 14 real PDF samples (the password-protected one opened by its configured password)
    and a generated Word file, ingested with the hashing embedder; the judgement's default
    threshold applies."""
    from tests.documents import PASSWORD, PASSWORD_PDF, samples, write_docx

    words = tmp_path_factory.mktemp("word")
    write_docx(words / "service-levels.docx")
    home = tmp_path_factory.mktemp("documents-home")
    settings = hashing_settings(home, pdf_passwords={PASSWORD_PDF: PASSWORD})
    ingest([samples(), words], settings, embedder=HashingEmbedder(), progress=False)
    engine = Engine.open(settings, embedder=HashingEmbedder())
    yield engine
    engine.close()


@pytest.fixture(scope="session")
def doors_engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    """The door tests' knowledge base (tests/doors.py): a policy, a forum post that disagrees
    with it, two tenants' private documents; keys in the settings."""
    from tests.doors import build_doors_kb

    settings = build_doors_kb(tmp_path_factory.mktemp("doors"))
    engine = Engine.open(settings, embedder=HashingEmbedder())
    yield engine
    engine.close()


@pytest.fixture(scope="session")
def doors_url(doors_engine: Engine) -> str:
    """A live `citadel serve` app over the doors' knowledge base, on 127.0.0.1."""
    from citadel.server import create_app
    from tests.live_server import live_server

    with live_server(create_app(doors_engine)) as url:
        yield url
