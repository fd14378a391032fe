"""Legitimate requests served while slow clients from many addresses attack `citadel serve`.

The demo knowledge base is ingested (local backend, MiniLM by default) into a temporary
CITADEL_HOME and served by `citadel serve` with its default limits (1000 connections, 64 per
client, headers within 10 s) in its own process. A well-behaved client on 127.0.0.1 asks
`/healthz` and `/v1/answer` in turn, a new connection per request, first with no attack
(baseline), then while `--addresses` x `--per-address` slow sockets from other loopback
addresses (each address under the per-client cap) trickle headers that never end and
reconnect whenever the server closes them (`tests/slow_clients.py`).

    .venv/bin/python benchmarks/slow_clients.py                     # 40 x 50 for 60 s
    .venv/bin/python benchmarks/slow_clients.py --seconds 20 --baseline-src /tmp/old/src

`--baseline-src` also serves the same snapshot with other code (e.g. a `git worktree` of an
earlier commit) first, in the same run. Prints a Markdown table and writes
benchmarks/results/slow_clients.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
from http_load import DEMO_KB, QUESTIONS, free_port, percentile, start_server  # noqa: E402
from tests.slow_clients import LoopbackAttack, SlowClients  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"


def legitimate(base: str, seconds: float) -> dict:
    """Sequential requests for `seconds`, `/healthz` and `/v1/answer` in turn."""
    statuses: list[int] = []
    latencies: list[float] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        t0 = time.perf_counter()
        try:
            if len(statuses) % 2:
                question = QUESTIONS[(len(statuses) // 2) % len(QUESTIONS)]
                r = httpx.post(f"{base}/v1/answer", json={"question": question}, timeout=10)
            else:
                r = httpx.get(f"{base}/healthz", timeout=10)
            statuses.append(r.status_code)
        except httpx.HTTPError:
            statuses.append(0)
        if statuses[-1] == 200:
            latencies.append((time.perf_counter() - t0) * 1000)
    served = statuses.count(200)
    return {"requests": len(statuses), "served": served,
            "served_fraction": round(served / max(len(statuses), 1), 4),
            "statuses": {str(s): statuses.count(s) for s in sorted(set(statuses))},
            "p50_ms": round(percentile(latencies, 50), 1) if latencies else None,
            "p99_ms": round(percentile(latencies, 99), 1) if latencies else None}


def legitimate_under_attack(home: Path, env: dict[str, str], args: argparse.Namespace,
                            attack_on: Callable[[int], LoopbackAttack]
                            ) -> tuple[dict, dict, LoopbackAttack]:
    """Serve `home` with `env`; `legitimate` requests for `args.baseline_seconds` with no
    attack, then for `args.seconds` under `attack_on(port)`; both results and the attack."""
    port = free_port()
    server = start_server(home, port, env)
    base = f"http://127.0.0.1:{port}"
    try:
        legitimate(base, 3)  # warm-up, not reported
        quiet = legitimate(base, args.baseline_seconds)
        print("  no attack: done", file=sys.stderr)
        with attack_on(port) as attack:
            time.sleep(2)  # the attack reaches its size before the first request
            attacked = legitimate(base, args.seconds)
        print("  under attack: done", file=sys.stderr)
    finally:
        server.terminate()
        server.wait(timeout=60)
    return quiet, attacked, attack


def measure(home: Path, env: dict[str, str], args: argparse.Namespace) -> dict:
    quiet, attacked, attack = legitimate_under_attack(
        home, env, args, lambda port: SlowClients(port, args.addresses, args.per_address))
    counts = attack.counts
    return {"no_attack": quiet, "attack": attacked,
            "attacker": {"sockets_opened": counts.opened,
                         "closed_by_server": counts.closed_by_server,
                         "answers": dict(counts.answers)}}


def before_and_now(args: argparse.Namespace, measure: Callable[..., dict],
                   settings: dict[str, str] | None = None) -> tuple[dict[str, dict], tuple]:
    """Ingest the demo KB into a temporary home (`args.embedder`), then `measure(home, env,
    args)` with the code of `args.baseline_src` if given ("baseline") and with this tree
    ("now"); `settings` are extra environment variables. The runs and the 1-minute load
    average before and after."""
    load_before = os.getloadavg()[0]
    runs: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="citadel-bench-") as tmp:
        home = Path(tmp)
        env = {k: v for k, v in os.environ.items() if not k.startswith("CITADEL_")}
        env.update(CITADEL_HOME=str(home), CITADEL_EMBEDDER=args.embedder, **(settings or {}))
        subprocess.run([sys.executable, "-m", "citadel", "ingest", str(DEMO_KB)], env=env,
                       check=True, stdout=subprocess.DEVNULL)
        if args.baseline_src is not None:
            old = {**env, "PYTHONPATH": str(args.baseline_src.resolve())}
            runs["baseline"] = measure(home, old, args)
        runs["now"] = measure(home, env, args)
    return runs, (round(load_before, 1), round(os.getloadavg()[0], 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--addresses", type=int, default=40)
    parser.add_argument("--per-address", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60, help="of attack")
    parser.add_argument("--baseline-seconds", type=float, default=15, help="with no attack")
    parser.add_argument("--embedder", default=os.environ.get("CITADEL_EMBEDDER", "minilm"))
    parser.add_argument("--baseline-src", type=Path, default=None)
    args = parser.parse_args()

    runs, load = before_and_now(args, measure)
    report = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                          "loadavg_1min_before_after": load},
              "embedder": args.embedder, "attack": {"addresses": args.addresses,
                                                    "per_address": args.per_address,
                                                    "seconds": args.seconds},
              **({"baseline_src": str(args.baseline_src)} if args.baseline_src else {}),
              "runs": runs}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "slow_clients.json").write_text(json.dumps(report, indent=2))
    print(f"\nLegitimate `/healthz` + `/v1/answer` (in turn, one connection each) while "
          f"{args.addresses} x {args.per_address} slow sockets attack for {args.seconds:g} s; "
          f"{args.embedder}, {os.cpu_count()} CPUs, load average {load[0]} before, "
          f"{load[1]} after:\n")
    print("| code | attack | requests | served | p50 ms | p99 ms | other statuses |")
    print("|---|---|---:|---:|---:|---:|---|")
    for name, run in runs.items():
        for phase in ("no_attack", "attack"):
            row = run[phase]
            other = {s: n for s, n in row["statuses"].items() if s != "200"}
            print(f"| {name} | {'yes' if phase == 'attack' else 'no'} | {row['requests']} | "
                  f"{row['served_fraction']:.1%} | {row['p50_ms'] or '-'} | "
                  f"{row['p99_ms'] or '-'} | "
                  f"{other or '-'} |")
    for name, run in runs.items():
        print(f"\n{name}: attacker sockets opened {run['attacker']['sockets_opened']}, "
              f"closed by the server {run['attacker']['closed_by_server']}, "
              f"answers {run['attacker']['answers']}")


if __name__ == "__main__":
    main()
