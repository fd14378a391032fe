"""Legitimate requests served while clients from many addresses hold long-lived responses.

The demo knowledge base is ingested into a temporary CITADEL_HOME and served by
`citadel serve` in its own process (open mode: no key needed), with its default connection
limits or with `--max-connections` / `--per-client`. A well-behaved client on 127.0.0.1 asks
`/healthz` and `/v1/answer` in turn, a new connection per request, first with no attack, then
while `--addresses` x `--per-address` sockets from 127.0.0.2 upwards ask for long-lived
responses (`GET /mcp` by default, as the report did; `--kinds mcp,answer,chat` adds answer
and chat streams) and ask again `--pause` seconds after the server closes one
(`tests/security/stream_holders.py`).

    .venv/bin/python benchmarks/stream_holders.py                       # 16 x 64 for 30 s
    .venv/bin/python benchmarks/stream_holders.py --max-connections 40 --per-client 15
    .venv/bin/python benchmarks/stream_holders.py --baseline-src /tmp/old/src

`--baseline-src` also serves the same snapshot with other code first, in the same run.
Prints a Markdown table and writes benchmarks/results/stream_holders.json.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
from http_load import DEMO_KB, free_port, start_server  # noqa: E402
from tests.security.stream_holders import StreamHolders  # noqa: E402

from slow_clients import legitimate  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"


def measure(home: Path, env: dict[str, str], args: argparse.Namespace) -> dict:
    port = free_port()
    server = start_server(home, port, env)
    base = f"http://127.0.0.1:{port}"
    try:
        legitimate(base, 3)  # warm-up, not reported
        quiet = legitimate(base, args.baseline_seconds)
        print("  no attack: done", file=sys.stderr)
        with StreamHolders(port, args.addresses, args.per_address, kinds=tuple(args.kinds),
                           pause=args.pause) as attack:
            time.sleep(2)  # the attack reaches its size before the first request
            attacked = legitimate(base, args.seconds)
            held_at_end = attack.counts.holding
        print("  under attack: done", file=sys.stderr)
    finally:
        server.terminate()
        server.wait(timeout=60)
    counts = attack.counts
    return {"no_attack": quiet, "attack": attacked,
            "attacker": {"sockets_opened": counts.opened, "most_held": counts.most_held,
                         "held_at_end": held_at_end, "answers": dict(counts.answers)}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--addresses", type=int, default=16)
    parser.add_argument("--per-address", type=int, default=64)
    parser.add_argument("--kinds", type=lambda v: v.split(","), default=["mcp"],
                        help="comma-separated: mcp, answer, chat")
    parser.add_argument("--pause", type=float, default=0.2,
                        help="seconds before a closed socket asks again")
    parser.add_argument("--seconds", type=float, default=30, help="of attack")
    parser.add_argument("--baseline-seconds", type=float, default=10, help="with no attack")
    parser.add_argument("--max-connections", type=int, default=None)
    parser.add_argument("--per-client", type=int, default=None)
    parser.add_argument("--embedder", default=os.environ.get("CITADEL_EMBEDDER", "minilm"))
    parser.add_argument("--baseline-src", type=Path, default=None)
    args = parser.parse_args()

    load_before = os.getloadavg()[0]
    runs: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="citadel-bench-") as tmp:
        home = Path(tmp)
        env = {k: v for k, v in os.environ.items() if not k.startswith("CITADEL_")}
        env.update(CITADEL_HOME=str(home), CITADEL_EMBEDDER=args.embedder)
        if args.max_connections is not None:
            env["CITADEL_HTTP_MAX_CONNECTIONS"] = str(args.max_connections)
        if args.per_client is not None:
            env["CITADEL_HTTP_MAX_CONNECTIONS_PER_CLIENT"] = str(args.per_client)
        subprocess.run([sys.executable, "-m", "citadel", "ingest", str(DEMO_KB)], env=env,
                       check=True, stdout=subprocess.DEVNULL)
        if args.baseline_src is not None:
            old = {**env, "PYTHONPATH": str(args.baseline_src.resolve())}
            runs["baseline"] = measure(home, old, args)
        runs["now"] = measure(home, env, args)
    load = (round(load_before, 1), round(os.getloadavg()[0], 1))
    report = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                          "loadavg_1min_before_after": load},
              "embedder": args.embedder,
              "limits": {"max_connections": args.max_connections or "default",
                         "per_client": args.per_client or "default"},
              "attack": {"addresses": args.addresses, "per_address": args.per_address,
                         "kinds": args.kinds, "pause": args.pause, "seconds": args.seconds},
              **({"baseline_src": str(args.baseline_src)} if args.baseline_src else {}),
              "runs": runs}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "stream_holders.json").write_text(json.dumps(report, indent=2))
    print(f"\nLegitimate `/healthz` + `/v1/answer` (in turn, one connection each) while "
          f"{args.addresses} x {args.per_address} sockets ask for {'/'.join(args.kinds)} "
          f"for {args.seconds:g} s; limits {report['limits']}; {args.embedder}, "
          f"{os.cpu_count()} CPUs, load average {load[0]} before, {load[1]} after:\n")
    print("| code | attack | requests | served | p50 ms | p99 ms | other statuses | "
          "long-lived held (most / at end) |")
    print("|---|---|---:|---:|---:|---:|---|---|")
    for name, run in runs.items():
        for phase in ("no_attack", "attack"):
            row = run[phase]
            other = {s: n for s, n in row["statuses"].items() if s != "200"}
            held = (f"{run['attacker']['most_held']} / {run['attacker']['held_at_end']}"
                    if phase == "attack" else "-")
            print(f"| {name} | {'yes' if phase == 'attack' else 'no'} | {row['requests']} | "
                  f"{row['served_fraction']:.1%} | {row['p50_ms'] or '-'} | "
                  f"{row['p99_ms'] or '-'} | {other or '-'} | {held} |")
    for name, run in runs.items():
        print(f"\n{name}: attacker sockets opened {run['attacker']['sockets_opened']}, "
              f"answers {run['attacker']['answers']}")


if __name__ == "__main__":
    main()
