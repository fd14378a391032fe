"""What each door adds to `/v1/answer`, per request: the same questions through `/v1/answer`
(plain httpx, the baseline), `citadel.client`, the OpenAI SDK (plain and streamed, to the last
chunk), MCP over streamable HTTP and MCP over stdio (`citadel mcp`), in one run, the doors
taking turns question by question so that a noisy neighbour weighs on all of them alike.

    .venv/bin/python benchmarks/doors.py [--rounds 5]

Knowledge base: the demo KB (MiniLM, default settings) in a temporary home, served by one
`citadel serve`-equivalent app on 127.0.0.1 in this process (MCP stdio runs `citadel mcp` as a
subprocess over the same home). Each door keeps its client (and connection) across requests,
as a real caller would. Reported per door: p50 and p95 in ms and the p50 difference to the
baseline. Writes benchmarks/results/doors.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
import httpx2  # noqa: E402
from mcp import Client as McpClient  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402
from tests.live_server import live_server  # noqa: E402

from citadel.client import AsyncClient  # noqa: E402
from citadel.config import Settings  # noqa: E402
from citadel.engine import Engine  # noqa: E402
from citadel.ingest.pipeline import ingest  # noqa: E402
from citadel.server import create_app  # noqa: E402

KEY = "bench-key-0123456789abcdef"  # a key for public documents: every door sends one
QUESTIONS = [json.loads(line)["question"] for line in
             (ROOT / "benchmarks" / "demo_questions.jsonl").read_text().splitlines() if line]
Door = Callable[[str], Awaitable[object]]


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


async def run(url: str, home: Path, rounds: int) -> dict[str, list[float]]:
    auth = {"Authorization": f"Bearer {KEY}"}
    http = httpx.AsyncClient(base_url=url, timeout=120, headers=auth)
    citadel = AsyncClient(url, api_key=KEY, timeout=120)
    sdk = AsyncOpenAI(base_url=f"{url}/v1", api_key=KEY, max_retries=0)
    mcp_http = McpClient(streamable_http_client(f"{url}/mcp", http_client=httpx2.AsyncClient(
        timeout=120, headers=auth)))
    mcp_stdio = McpClient(StdioServerParameters(
        command=sys.executable, args=["-m", "citadel", "mcp"],
        env={**os.environ, "CITADEL_HOME": str(home), "CITADEL_MCP_API_KEY": KEY,
             "CITADEL_API_KEYS": json.dumps({KEY: ""})}))

    async def baseline(q: str) -> object:
        response = await http.post("/v1/answer", json={"question": q})
        response.raise_for_status()
        return response.json()

    async def chat(q: str) -> object:
        return await sdk.chat.completions.create(
            model="citadel", messages=[{"role": "user", "content": q}])

    async def chat_stream(q: str) -> object:
        stream = await sdk.chat.completions.create(
            model="citadel", messages=[{"role": "user", "content": q}], stream=True)
        return [chunk async for chunk in stream]

    async with mcp_http, mcp_stdio:
        doors: dict[str, Door] = {
            "/v1/answer (httpx)": baseline,
            "citadel.client": lambda q: citadel.answer(q),
            "chat completions": chat,
            "chat completions, stream": chat_stream,
            "MCP, streamable HTTP": lambda q: mcp_http.call_tool("answer", {"question": q}),
            "MCP, stdio": lambda q: mcp_stdio.call_tool("answer", {"question": q}),
        }
        for door in doors.values():  # warm every path (models, connections, caches)
            await door(QUESTIONS[0])
        times: dict[str, list[float]] = {name: [] for name in doors}
        for r in range(rounds):
            for q in QUESTIONS:
                for name, door in doors.items():
                    t0 = time.perf_counter()
                    await door(q)
                    times[name].append((time.perf_counter() - t0) * 1000)
            print(f"round {r + 1}/{rounds}", file=sys.stderr)
    await http.aclose()
    await citadel.aclose()
    await sdk.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="passes over the questions")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="citadel-doors-"))
    try:
        settings = Settings(home=tmp / "home", api_keys={KEY: ""})
        ingest([ROOT / "examples" / "support-kb"], settings, progress=False)
        engine = Engine.open(settings)
        try:
            with live_server(create_app(engine)) as url:
                times = asyncio.run(run(url, settings.home, args.rounds))
        finally:
            engine.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    base = pct(times["/v1/answer (httpx)"], 0.5)
    rows = {name: {"p50_ms": round(pct(t, 0.5), 1), "p95_ms": round(pct(t, 0.95), 1),
                   "added_p50_ms": round(pct(t, 0.5) - base, 1), "n": len(t)}
            for name, t in times.items()}
    print(f"{'door':28} {'p50 ms':>8} {'p95 ms':>8} {'added p50':>10}")
    for name, row in rows.items():
        print(f"{name:28} {row['p50_ms']:8.1f} {row['p95_ms']:8.1f} {row['added_p50_ms']:+10.1f}")
    out = ROOT / "benchmarks" / "results" / "doors.json"
    out.write_text(json.dumps({"questions": len(QUESTIONS), "rounds": args.rounds,
                               "doors": rows}, indent=2) + "\n")
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
