"""HTTP load benchmark: `/v1/answer` throughput and latency, and time to first stream delta.

The demo knowledge base is ingested (local backend, the configured embedder: MiniLM by
default) into a temporary CITADEL_HOME; `citadel serve` runs in its own process; this process
generates the load over loopback with a fixed number of closed-loop workers per level.
Bounded: `--requests` per level and `--max-seconds` per level, whichever comes first.

    .venv/bin/python benchmarks/http_load.py                 # the table in docs/http.md
    .venv/bin/python benchmarks/http_load.py --requests 100 --embedder hashing

Prints a Markdown table and writes benchmarks/results/http_load.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
DEMO_KB = ROOT / "examples" / "support-kb"
RESULTS = ROOT / "benchmarks" / "results"

QUESTIONS = [
    "How long do I have to return an item?",
    "How much does express delivery cost?",
    "How long are gift cards valid?",
    "How do I delete my account?",
    "How long does the warranty last?",
    "Can I change my order after placing it?",
    "How do I track my order?",
    "Do you ship internationally?",
    "How do loyalty points work?",
    "Do you match prices?",
    "How do I cancel my subscription?",
    "What is the capital of France?",
]


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = (len(ordered) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(home: Path, port: int, env: dict[str, str]) -> subprocess.Popen:
    log = (home / "server.log").open("w")
    proc = subprocess.Popen(
        # Default log level: the one-JSON-line-per-request log is part of what is measured.
        [sys.executable, "-m", "citadel", "serve", "--port", str(port)],
        env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited: see {home / 'server.log'}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    proc.kill()
    raise SystemExit("server did not become ready in 120 s")


async def answer_level(base: str, concurrency: int, requests: int, max_seconds: float
                       ) -> dict:
    latencies: list[float] = []
    engine_ms: list[float] = []
    errors = 0
    issued = 0
    started = time.perf_counter()
    deadline = started + max_seconds

    async def worker(client: httpx.AsyncClient) -> None:
        nonlocal issued, errors
        while issued < requests and time.perf_counter() < deadline:
            question = QUESTIONS[issued % len(QUESTIONS)]
            issued += 1
            request_id = f"c{concurrency}-{issued}"
            t0 = time.perf_counter()
            try:
                r = await client.post("/v1/answer", json={"question": question},
                                      headers={"X-Request-ID": request_id})
            except httpx.TransportError as exc:  # counted, not fatal: the table says how many
                errors += 1
                print(f"  transport error: {type(exc).__name__}: {exc}", file=sys.stderr)
                continue
            latencies.append((time.perf_counter() - t0) * 1000)
            if r.status_code != 200:
                errors += 1
            else:
                engine_ms.append(r.json()["trace"]["latencies_ms"]["total"])

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as client:
        await asyncio.gather(*(worker(client) for _ in range(concurrency)))
    wall = time.perf_counter() - started
    return {"concurrency": concurrency, "requests": len(latencies), "errors": errors,
            "seconds": round(wall, 2), "rps": round(len(latencies) / wall, 1),
            "p50_ms": round(percentile(latencies, 50), 1),
            "p99_ms": round(percentile(latencies, 99), 1),
            "engine_p50_ms": round(percentile(engine_ms, 50), 1)}


def server_latencies(log: Path, concurrency: int) -> dict:
    """Latency as the server logged it (its one JSON line per request), for one level."""
    prefix = f"c{concurrency}-"
    ms = [line["latency_ms"] for line in map(json.loads, (
        text for text in log.read_text().splitlines() if text.startswith("{")))
        if str(line.get("client_request_id") or "").startswith(prefix)]
    return {"server_p50_ms": round(percentile(ms, 50), 1),
            "server_p99_ms": round(percentile(ms, 99), 1)}


def first_delta(base: str, requests: int, max_seconds: float) -> dict:
    firsts: list[float] = []
    totals: list[float] = []
    deadline = time.perf_counter() + max_seconds
    with httpx.Client(base_url=base, timeout=120) as client:
        for i in range(requests):
            if time.perf_counter() > deadline:
                break
            t0 = time.perf_counter()
            first = None
            with client.stream("POST", "/v1/answer/stream",
                               json={"question": QUESTIONS[i % len(QUESTIONS)]}) as r:
                for line in r.iter_lines():
                    if first is None and line == "event: delta":
                        first = (time.perf_counter() - t0) * 1000
            totals.append((time.perf_counter() - t0) * 1000)
            if first is not None:
                firsts.append(first)
    return {"requests": len(totals), "first_delta_p50_ms": round(percentile(firsts, 50), 1),
            "first_delta_p99_ms": round(percentile(firsts, 99), 1),
            "stream_total_p50_ms": round(percentile(totals, 50), 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=300, help="per concurrency level")
    parser.add_argument("--concurrency", default="1,8,32")
    parser.add_argument("--stream-requests", type=int, default=60)
    parser.add_argument("--max-seconds", type=float, default=60, help="per level")
    parser.add_argument("--embedder", default=os.environ.get("CITADEL_EMBEDDER", "minilm"))
    parser.add_argument("--baseline-src", type=Path, default=None,
                        help="also serve with this `src` folder first (e.g. a worktree of an "
                             "earlier commit) and print the ratio")
    args = parser.parse_args()

    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="citadel-bench-") as tmp:
        home = Path(tmp)
        env = {**os.environ, "CITADEL_HOME": str(home), "CITADEL_EMBEDDER": args.embedder}
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "citadel", "ingest", str(DEMO_KB)], env=env,
                       check=True, stdout=subprocess.DEVNULL)
        print(f"ingested the demo KB ({args.embedder}) in {time.perf_counter() - t0:.1f}s",
              file=sys.stderr)
        baseline = None
        if args.baseline_src is not None:
            # The same snapshot served by other code (e.g. a `git worktree` of an earlier
            # commit), measured first in the same run: a before/after pair on one machine.
            old = {**env, "PYTHONPATH": str(args.baseline_src.resolve())}
            baseline, _, _ = measure(home, old, args)
            print("  baseline measured", file=sys.stderr)
        levels, stream, floor = measure(home, env, args)
    load = (round(load_before, 1), round(os.getloadavg()[0], 1))
    report = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                          "platform": platform.platform(), "loadavg_1min_before_after": load},
              "embedder": args.embedder, "backend": "local", "answer": levels,
              "stream": stream, "healthz": floor,
              **({"baseline": {"src": str(args.baseline_src), "answer": baseline}}
                 if baseline is not None else {})}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "http_load.json").write_text(json.dumps(report, indent=2))
    print(f"\n`/v1/answer`, demo KB, local backend, {args.embedder} embedder, "
          f"{os.cpu_count()} CPUs, server and load generator on one machine "
          f"(1-min load average {load[0]} before, {load[1]} after):\n")
    print("| concurrency | requests | req/s | p50 ms | p99 ms | server p50 / p99 ms "
          "| engine p50 ms | errors |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in levels:
        print(f"| {row['concurrency']} | {row['requests']} | {row['rps']} | {row['p50_ms']} | "
              f"{row['p99_ms']} | {row['server_p50_ms']} / {row['server_p99_ms']} | "
              f"{row['engine_p50_ms']} | {row['errors']} |")
    if baseline is not None:
        print(f"\nBaseline (`{args.baseline_src}`, measured first, same snapshot):\n")
        print("| concurrency | req/s baseline | req/s now | ratio | p50 ms baseline | p50 ms now |")
        print("|---:|---:|---:|---:|---:|---:|")
        for old, new in zip(baseline, levels, strict=True):
            print(f"| {new['concurrency']} | {old['rps']} | {new['rps']} | "
                  f"{new['rps'] / old['rps']:.2f} | {old['p50_ms']} | {new['p50_ms']} |")
    print("\np50/p99: as the load generator saw them; server: from the server's request log "
          "(app entry to last byte); engine: `trace.latencies_ms.total`.")
    print(f"\n`/v1/answer/stream` ({stream['requests']} sequential requests): time to first "
          f"`delta` p50 {stream['first_delta_p50_ms']} ms, p99 {stream['first_delta_p99_ms']} "
          f"ms; whole stream p50 {stream['stream_total_p50_ms']} ms.")
    print(f"`/healthz` at concurrency 8 (HTTP floor): {floor['rps']} req/s, "
          f"p50 {floor['p50_ms']} ms.")


def measure(home: Path, env: dict[str, str], args) -> tuple[list[dict], dict, dict]:
    """Serve `home` with `env`, warm up, and measure every concurrency level, the stream and
    the HTTP floor."""
    port = free_port()
    server = start_server(home, port, env)
    base = f"http://127.0.0.1:{port}"
    try:
        asyncio.run(answer_level(base, 4, 40, 30))  # warm-up, not reported
        floor = asyncio.run(health_level(base, 8, 2000, 10))
        levels = []
        for c in (int(x) for x in args.concurrency.split(",")):
            levels.append(asyncio.run(answer_level(base, c, args.requests, args.max_seconds)))
            print(f"  concurrency {c}: done", file=sys.stderr)
        stream = first_delta(base, args.stream_requests, args.max_seconds)
    finally:
        server.terminate()
        server.wait(timeout=30)
    for row in levels:
        row.update(server_latencies(home / "server.log", row["concurrency"]))
    return levels, stream, floor


async def health_level(base: str, concurrency: int, requests: int, max_seconds: float) -> dict:
    latencies: list[float] = []
    issued = 0
    started = time.perf_counter()

    async def worker(client: httpx.AsyncClient) -> None:
        nonlocal issued
        while issued < requests and time.perf_counter() - started < max_seconds:
            issued += 1
            t0 = time.perf_counter()
            await client.get("/healthz")
            latencies.append((time.perf_counter() - t0) * 1000)

    async with httpx.AsyncClient(base_url=base, timeout=30) as client:
        await asyncio.gather(*(worker(client) for _ in range(concurrency)))
    wall = time.perf_counter() - started
    return {"requests": len(latencies), "rps": round(len(latencies) / wall, 1),
            "p50_ms": round(statistics.median(latencies), 1)}


if __name__ == "__main__":
    main()
