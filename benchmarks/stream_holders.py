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
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
from tests.security.stream_holders import StreamHolders  # noqa: E402

from slow_clients import before_and_now, legitimate_under_attack  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"


def measure(home: Path, env: dict[str, str], args: argparse.Namespace) -> dict:
    quiet, attacked, attack = legitimate_under_attack(
        home, env, args, lambda port: StreamHolders(port, args.addresses, args.per_address,
                                                    kinds=tuple(args.kinds), pause=args.pause))
    counts = attack.counts
    return {"no_attack": quiet, "attack": attacked,
            "attacker": {"sockets_opened": counts.opened, "most_held": counts.most_held,
                         "held_at_end": counts.holding, "answers": dict(counts.answers)}}


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

    settings = {}
    if args.max_connections is not None:
        settings["CITADEL_HTTP_MAX_CONNECTIONS"] = str(args.max_connections)
    if args.per_client is not None:
        settings["CITADEL_HTTP_MAX_CONNECTIONS_PER_CLIENT"] = str(args.per_client)
    runs, load = before_and_now(args, measure, settings)
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
