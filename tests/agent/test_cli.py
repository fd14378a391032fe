"""`citadel demo-data` and `citadel agent` through the click command line."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from citadel.cli import main
from citadel.ingest.pipeline import ingest
from citadel.retrieval.embedders.hashing import HashingEmbedder
from tests.agent.conftest import ALICE_KEY
from tests.conftest import DEMO_KB, hashing_settings


@pytest.fixture(scope="module")
def kb_home(tmp_path_factory):
    home = tmp_path_factory.mktemp("agent-cli-home")
    ingest([DEMO_KB], hashing_settings(home), embedder=HashingEmbedder(), progress=False)
    return home


def run(home, *args, **env):
    base = {"CITADEL_HOME": str(home), "CITADEL_EMBEDDER": "hashing",
            "CITADEL_BUSINESS_DSN": None, "CITADEL_API_KEY": None, "CITADEL_CONFIG": None}
    return CliRunner().invoke(main, list(args), env={**base, **env})


@pytest.fixture
def seeded(kb_home, tmp_path):
    dsn = str(tmp_path / "business.sqlite")
    out = run(kb_home, "demo-data", CITADEL_BUSINESS_DSN=dsn)
    assert out.exit_code == 0, out.output
    return dsn


def test_demo_data_prints_customers_keys_and_orders(kb_home, tmp_path):
    dsn = str(tmp_path / "b.sqlite")
    first = run(kb_home, "demo-data", "--today", "2026-06-15", CITADEL_BUSINESS_DSN=dsn)
    second = run(kb_home, "demo-data", "--today", "2026-06-15", CITADEL_BUSINESS_DSN=dsn)
    assert first.exit_code == 0 and first.output == second.output
    assert "customer cust_alice (Alice Rowan)  API key: " + ALICE_KEY in first.output
    assert "order #1042: inside the 30-day window" in first.output
    assert "customer cust_bob" in first.output


def test_agent_prints_business_facts_then_cited_policy(kb_home, seeded):
    out = run(kb_home, "agent", "--customer", "cust_alice", "Can I get a refund for order 1042?",
              CITADEL_BUSINESS_DSN=seeded)
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert lines[0].startswith("Your order #1042 was delivered on ")
    assert "(order system)" in lines[0] and "Our policy: " in lines[0]
    assert "  check_refund_eligibility(order_id=1042) -> ok" in lines
    assert "Policy (knowledge base, cited):" in lines
    cited = [line for line in lines if line.startswith("    [") and '] "' in line]  # quotes
    assert cited and all(line.startswith(("    [refunds-policy#", "    [holiday-returns#"))
                         for line in cited)


def test_agent_json_and_api_key(kb_home, seeded):
    out = run(kb_home, "agent", "--json", "--api-key", ALICE_KEY, "Please refund order 1042",
              CITADEL_BUSINESS_DSN=seeded)
    assert out.exit_code == 0, out.output
    body = json.loads(out.output)
    assert body["customer_id"] == "cust_alice" and body["intent"] == "request_refund"
    assert body["business"][0]["outcome"] == "refund_created"
    assert body["business"][0]["authoritative"] is True


def test_agent_without_knowledge_base_still_answers_from_the_order_system(tmp_path, seeded):
    out = run(tmp_path, "agent", "--customer", "cust_alice", "Can I get a refund for order 1042?",
              CITADEL_BUSINESS_DSN=seeded)
    assert out.exit_code == 0, out.output
    assert "(order system)" in out.output and "(degraded: knowledge base:" in out.output


@pytest.mark.parametrize(("args", "message"), [
    (["--customer", "cust_zed"], "no customer 'cust_zed'"),
    (["--customer", "x' OR '1'='1"], "not a customer id"),
    (["--api-key", "cit_wrong_wrong_wrong_wrong"], "missing or invalid API key"),
])
def test_unknown_callers_are_refused_with_one_line(kb_home, seeded, args, message):
    out = run(kb_home, "agent", *args, "Where is order 1042?", CITADEL_BUSINESS_DSN=seeded)
    assert out.exit_code == 1 and message in out.output
    assert len(out.output.strip().splitlines()) == 1


@pytest.mark.parametrize("args", [
    [], ["--customer", "cust_alice", "--api-key", ALICE_KEY],
    ["--customer", "cust_alice", "--order-id", "-1"],
    ["--customer", "cust_alice", "--order-id", "abc"],
    ["--customer", "cust_alice", "--idempotency-key", "no spaces please"],
])
def test_bad_usage_exits_2(kb_home, seeded, args):
    out = run(kb_home, "agent", *args, "Where is order 1042?", CITADEL_BUSINESS_DSN=seeded)
    assert out.exit_code == 2


def test_agent_on_postgres(kb_home, agent_pg_dsn):
    seeded = run(kb_home, "demo-data", CITADEL_BUSINESS_DSN=agent_pg_dsn)
    assert seeded.exit_code == 0 and "demo data written to postgres:" in seeded.output
    out = run(kb_home, "agent", "--customer", "cust_bob", "Where is order 2001?",
              CITADEL_BUSINESS_DSN=agent_pg_dsn)
    assert out.exit_code == 0, out.output
    assert out.output.startswith("Your order #2001 was delivered on ")
    assert "€240.00" in out.output


def test_business_outage_is_one_line_not_a_traceback(kb_home, tmp_path):
    broken = tmp_path / "broken.sqlite"
    broken.write_bytes(b"garbage" * 1000)
    out = run(kb_home, "agent", "--customer", "cust_alice", "Where is order 1042?",
              CITADEL_BUSINESS_DSN=str(broken))
    assert out.exit_code == 1 and "I can't check your order right now" in out.output
    assert "Traceback" not in out.output and len(out.output.strip().splitlines()) == 1
