"""What the support agent costs on top of a plain policy answer, per business database.

    .venv/bin/python benchmarks/agent_latency.py [--postgres DSN] [--n 200] [--embedder minilm]

Ingests the demo KB into a temporary home, seeds the demo business data, then times (same
process, interleaved, after a warm-up) the baseline `Engine.answer` of the refund policy
question against: the agent's eligibility request (decide + tool + policy answer), an
order-status request (tool only), and one tool call alone. Then 20 threads send the same
refund request at once; exactly one refund must come out. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from citadel.agent.agent import SupportAgent
from citadel.agent.db import BusinessDB, PostgresBusinessDB, SqliteBusinessDB
from citadel.agent.decider import REFUND_POLICY_QUESTION, RuleDecider
from citadel.agent.demo_data import seed_demo_data
from citadel.agent.records import Caller
from citadel.agent.tools import CustomerTools
from citadel.config import Settings
from citadel.engine import Engine
from citadel.ingest.pipeline import ingest

ROOT = Path(__file__).resolve().parents[1]
ALICE = Caller(customer_id="cust_alice", name="Alice Rowan", actor="benchmark")


def timed(fn, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return out


def p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] if len(values) > 1 else values[0]


def bench_db(name: str, db: BusinessDB, engine: Engine, n: int) -> list[tuple]:
    seed_demo_data(db)
    agent = SupportAgent(db, engine, RuleDecider())
    tools = CustomerTools(db, ALICE, request_id="bench")
    cases = {
        "baseline: Engine.answer(policy question)":
            lambda: engine.answer(REFUND_POLICY_QUESTION),
        "agent: refund eligibility + cited policy":
            lambda: agent.respond("Can I get a refund for order 1042?", ALICE),
        "agent: order status (tool only)": lambda: agent.respond("Where is order 1045?", ALICE),
        "tool: check_refund_eligibility alone": lambda: tools.check_refund_eligibility(1042),
    }
    for fn in cases.values():  # warm-up
        timed(fn, 5)
    samples: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(n):  # interleaved, so drift on a shared machine hits every case alike
        for k, fn in cases.items():
            samples[k].extend(timed(fn, 1))
    base = statistics.median(samples["baseline: Engine.answer(policy question)"])
    rows = [(name, k, statistics.median(v), p(v, 95), statistics.median(v) / base)
            for k, v in samples.items()]

    seed_demo_data(db)
    start = threading.Barrier(20)

    def attempt(_):
        t = CustomerTools(db, ALICE, request_id=uuid.uuid4().hex)
        start.wait()
        return t.request_refund(1042, "benchmark", "bench-parallel-key").outcome

    t0 = time.perf_counter()
    with ThreadPoolExecutor(20) as pool:
        outcomes = list(pool.map(attempt, range(20)))
    wall = (time.perf_counter() - t0) * 1000
    with db.transaction() as tx:
        made = tx.one("SELECT count(*) AS n FROM refunds WHERE order_id = 1042")["n"]
    rows.append((name, f"20 parallel identical refunds: {outcomes.count('refund_created')} "
                 f"created, {outcomes.count('refund_replayed')} replayed, {made} in DB",
                 wall, float("nan"), float("nan")))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--postgres", help="also run against this PostgreSQL DSN (a database "
                    "this benchmark may write demo rows to)")
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--embedder", default="minilm")
    args = ap.parse_args()
    home = Path(tempfile.mkdtemp(prefix="citadel-agent-bench-"))
    settings = Settings(home=home, embedder=args.embedder)
    ingest([ROOT / "examples" / "support-kb"], settings, progress=False)
    engine = Engine.open(settings)
    rows = bench_db("sqlite", SqliteBusinessDB(home / "business.sqlite"), engine, args.n)
    if args.postgres:
        pg = PostgresBusinessDB(args.postgres)
        rows += bench_db("postgres", pg, engine, args.n)
        pg.close()
    print(f"embedder={args.embedder}, n={args.n} per case\n")
    print("| database | case | p50 ms | p95 ms | p50 / baseline |")
    print("|---|---|---:|---:|---:|")
    for db, case, p50, p95, ratio in rows:
        r = "" if ratio != ratio else f"{ratio:.2f}"
        q95 = "" if p95 != p95 else f"{p95:.2f}"
        print(f"| {db} | {case} | {p50:.2f} | {q95} | {r} |")


if __name__ == "__main__":
    main()
