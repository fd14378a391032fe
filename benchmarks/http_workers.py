"""HTTP throughput before and after, one and several workers, in one run, with wrk as client.

Each variant gets its own CITADEL_HOME with the demo KB ingested by that variant's code
(local backend, MiniLM by default), its own `citadel serve` process (tree), and the same load:
`wrk` (Debian's `apt-get install wrk`, a C client that needs far less CPU than a Python one;
one thread, N keep-alive connections, closed loop) posting the demo questions in turn to
`/v1/answer` for `--seconds`. Before the load every variant answers the demo questions once
with fixed request ids; the answers must be byte-identical across variants (the response
bytes with `trace.latencies_ms` cut out), else the run fails.

    .venv/bin/python benchmarks/http_workers.py                      # before = git main
    .venv/bin/python benchmarks/http_workers.py --before-ref 5909ee7 --seconds 30

"before" is `git archive <ref> src` unpacked into a temporary directory and run with
PYTHONPATH pointing at it (it has no `--workers`, so only workers=1). Prints a Markdown table
and writes benchmarks/results/http_workers.json.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import httpx
import psutil

ROOT = Path(__file__).resolve().parents[1]
DEMO_KB = ROOT / "examples" / "support-kb"
RESULTS = ROOT / "benchmarks" / "results"
sys.path.insert(0, str(ROOT / "benchmarks"))
from http_load import QUESTIONS  # noqa: E402  (the same questions as http_load.py)

LATENCIES = re.compile(rb'"latencies_ms":\{[^{}]*\}')


def demo_questions() -> list[str]:
    rows = (json.loads(line) for line in
            (ROOT / "benchmarks" / "demo_questions.jsonl").read_text().splitlines() if line)
    return list(dict.fromkeys([*(r["question"] for r in rows), *QUESTIONS]))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def old_source(ref: str, into: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "src"], check=True,
                             capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def start(env: dict[str, str], home: Path, workers: int) -> subprocess.Popen:
    port = free_port()
    cmd = [sys.executable, "-m", "citadel", "serve", "--port", str(port)]
    if workers > 1:
        cmd += ["--workers", str(workers)]
    # Default log level: the one JSON line per request is part of what is measured.
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                            stderr=(home / "server.log").open("w"))
    proc.port = port  # type: ignore[attr-defined]
    deadline = time.monotonic() + 180
    base = f"http://127.0.0.1:{port}"
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited: see {home / 'server.log'}")
        try:
            if httpx.get(f"{base}/readyz", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    else:
        proc.kill()
        raise SystemExit("server did not become ready in 180 s")
    if workers > 1:  # every worker has finished its startup (warm-up included)
        log = home / "server.log"
        while log.read_text().count("Application startup complete") < workers:
            if time.monotonic() > deadline or proc.poll() is not None:
                raise SystemExit(f"workers did not start: see {log}")
            time.sleep(0.3)
    return proc


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process and its children (the workers)."""
    root = psutil.Process(pid)
    total = 0.0
    for proc in [root, *root.children(recursive=True)]:
        try:
            t = proc.cpu_times()
            total += t.user + t.system
        except psutil.NoSuchProcess:
            pass
    return total


def comparable(body: bytes) -> bytes:
    """An answer without what differs per request (the server's request id, timings, the
    receipt's time and signature), for comparing answers across servers."""
    answer = json.loads(LATENCIES.sub(b'"latencies_ms":{}', body))
    answer["trace"]["request_id"] = ""
    answer["receipt"] = None
    return json.dumps(answer, sort_keys=True).encode()


def answers_digest(base: str, questions: list[str]) -> tuple[str, list[bytes]]:
    bodies = []
    with httpx.Client(base_url=base, timeout=120) as client:
        for n, q in enumerate(questions):
            r = client.post("/v1/answer", json={"question": q},
                            headers={"X-Request-ID": f"same-{n}"})
            r.raise_for_status()
            bodies.append(comparable(r.content))
    return hashlib.sha256(b"\n".join(bodies)).hexdigest(), bodies


WRK_SCRIPT = """
local questions = {%s}
local i = 0
request = function()
  i = i + 1
  local body = '{"question":"' .. questions[(i %% #questions) + 1] .. '"}'
  return wrk.format("POST", "/v1/answer", {["Content-Type"] = "application/json"}, body)
end
"""


def wrk(base: str, path: str, connections: int, seconds: float, script: Path | None) -> dict:
    cmd = ["wrk", "-t1", f"-c{connections}", f"-d{seconds:g}s", "--latency", "--timeout", "10s"]
    if script is not None:
        cmd += ["-s", str(script)]
    out = subprocess.run([*cmd, base + path], check=True, capture_output=True,
                         text=True).stdout

    def ms(label: str) -> float:
        m = re.search(rf"^\s+{label}\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        if not m:
            return float("nan")
        return float(m.group(1)) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[m.group(2)]

    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    total = int(re.search(r"(\d+) requests in", out).group(1))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    sock = re.search(r"Socket errors: (.*)", out)
    return {"requests": total, "rps": round(rps, 1), "p50_ms": round(ms("50%"), 1),
            "p99_ms": round(ms("99%"), 1), "non_2xx": int(errors.group(1)) if errors else 0,
            "socket_errors": sock.group(1).strip() if sock else ""}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before-ref", default="main", help="git ref of the 'before' code")
    parser.add_argument("--workers", default="1,2", help="worker counts of the 'after' code")
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--embedder", default=os.environ.get("CITADEL_EMBEDDER", "minilm"))
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("needs wrk: apt-get install -y wrk")

    questions = demo_questions()
    load_before = os.getloadavg()[0]
    rows, digests = [], {}
    with tempfile.TemporaryDirectory(prefix="citadel-http-") as tmp:
        tmp_path = Path(tmp)
        script = tmp_path / "answer.lua"
        script.write_text(WRK_SCRIPT % ", ".join(json.dumps(q) for q in QUESTIONS))
        variants = [("before", args.before_ref, old_source(args.before_ref, tmp_path / "old"),
                     1)]
        variants += [("after", "working tree", ROOT / "src", int(w))
                     for w in args.workers.split(",")]
        for name, ref, src, workers in variants:
            home = tmp_path / f"home-{name}-{workers}"
            home.mkdir()
            env = {**os.environ, "CITADEL_HOME": str(home), "CITADEL_EMBEDDER": args.embedder,
                   "PYTHONPATH": str(src)}
            subprocess.run([sys.executable, "-m", "citadel", "ingest", "-q", str(DEMO_KB)],
                           env=env, check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            server = start(env, home, workers)
            base = f"http://127.0.0.1:{server.port}"  # type: ignore[attr-defined]
            try:
                digest, bodies = answers_digest(base, questions)
                digests[(name, workers)] = (digest, bodies)
                wrk(base, "/v1/answer", args.connections, 3, script)  # warm-up
                floor = wrk(base, "/healthz", args.connections, 5, None)
                cpu0, wall0 = cpu_seconds(server.pid), time.perf_counter()
                row = wrk(base, "/v1/answer", args.connections, args.seconds, script)
                cpu = cpu_seconds(server.pid) - cpu0
                row.update(server_cpu_ms_per_request=round(cpu * 1000 / row["requests"], 1),
                           server_cores_busy=round(cpu / (time.perf_counter() - wall0), 2))
            finally:
                server.terminate()
                server.wait(timeout=60)
            row.update(variant=name, ref=ref, workers=workers, healthz_rps=floor["rps"],
                       answers_sha256=digest[:16])
            rows.append(row)
            print(f"  {name} workers={workers}: {row['rps']} req/s", file=sys.stderr)

    reference, ref_bodies = digests[("before", 1)]
    for key, (digest, bodies) in digests.items():
        if digest != reference:
            for q, a, b in zip(questions, ref_bodies, bodies, strict=True):
                if a != b:
                    raise SystemExit(f"answers differ ({key}) for {q!r}:\n{a!r}\n{b!r}")
    load = (round(load_before, 1), round(os.getloadavg()[0], 1))
    report = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                          "platform": platform.platform(), "loadavg_1min_before_after": load},
              "client": "wrk -t1", "connections": args.connections, "seconds": args.seconds,
              "embedder": args.embedder, "questions_checked": len(questions), "rows": rows}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "http_workers.json").write_text(json.dumps(report, indent=2))
    print(f"\n`POST /v1/answer`, demo KB, local backend, {args.embedder} embedder, "
          f"{os.cpu_count()} CPUs, wrk (1 thread, {args.connections} connections, "
          f"{args.seconds:g} s per row) on the same machine (1-min load average {load[0]} "
          f"before, {load[1]} after):\n")
    print("| code | workers | requests | req/s | p50 ms | p99 ms | non-2xx | server CPU ms "
          "per request | server cores busy | `/healthz` req/s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['variant']} ({r['ref']}) | {r['workers']} | {r['requests']} | {r['rps']} "
              f"| {r['p50_ms']} | {r['p99_ms']} | {r['non_2xx']} "
              f"| {r['server_cpu_ms_per_request']} | {r['server_cores_busy']} "
              f"| {r['healthz_rps']} |")
    print("\nserver CPU: user + system time of the `citadel serve` process tree during the "
          "load, per answered request; cores busy: that time over the wall time.")
    print(f"\nAnswers to {len(questions)} demo questions byte-identical across rows "
          f"(sha256 {reference[:16]}, `trace.latencies_ms` cut out).")


if __name__ == "__main__":
    main()
