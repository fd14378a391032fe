"""Graceful drain: `citadel serve` as a real process, SIGTERM while requests are in flight;
and every streaming door ending in its own wire format when the drain says so.

The generator is a scripted language model (tests/llm_server.py) that answers slowly: the
request in flight finishes with 200, a stream still open near the deadline gets a final
`error` event (shutting_down), a new connection after the signal is refused, and the process
exits 0 before the drain deadline; with `--workers 2` every worker drains.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from citadel.engine import Engine
from citadel.ingest.pipeline import ingest
from citadel.retrieval.embedders.hashing import HashingEmbedder
from citadel.server import create_app
from citadel.server.chat_models import MODEL_ID
from citadel.server.drain import STREAM_MARGIN
from tests.answering.test_openai_engine_stream import QUESTION, good
from tests.cli.test_cli_serve import free_port, wait_until_ready
from tests.conftest import DEMO_KB, hashing_settings
from tests.live_server import live_server
from tests.llm_server import Hang, Reply, ScriptedLLM, Seen, answer_json
from tests.server.test_http_streaming import parse_sse

FACT = "UK express delivery costs £9.95"


def content(req: Seen) -> str:
    """The streamed answer with inline citations, or the JSON answer of a plain request."""
    if req.body.get("stream"):
        return good(req)
    label = req.label_of(FACT)
    return answer_json(f"{FACT} [{label}].", [(label, FACT)])


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("drain-home")
    ingest([DEMO_KB], hashing_settings(home), embedder=HashingEmbedder(), progress=False)
    return home


@pytest.fixture
def llm():
    with ScriptedLLM() as server:
        yield server


@dataclass
class Served:
    proc: subprocess.Popen
    base: str
    port: int
    stderr: str = ""  # once the process has ended


@contextmanager
def serve(home: Path, llm: ScriptedLLM, model: str, *args: str) -> Iterator[Served]:
    port = free_port()
    env = {**os.environ, "CITADEL_HOME": str(home), "CITADEL_EMBEDDER": "hashing",
           "CITADEL_GENERATOR": "openai", "CITADEL_LLM_BASE_URL": llm.base_url,
           "CITADEL_LLM_MODEL": model, "CITADEL_LLM_TIMEOUT": "60",
           "CITADEL_LLM_MAX_RETRIES": "0", "CITADEL_SUPPORT_THRESHOLD": "0"}
    proc = subprocess.Popen([sys.executable, "-m", "citadel", "serve", "--port", str(port),
                             *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    served = Served(proc, f"http://127.0.0.1:{port}", port)
    base = served.base
    try:
        wait_until_ready(proc, base, 120)
        yield served
    finally:
        if proc.poll() is None:
            proc.kill()
        served.stderr = proc.communicate(timeout=30)[1]


def in_background(fn, *args) -> tuple[threading.Thread, dict]:
    out: dict = {}

    def run() -> None:
        try:
            out["value"] = fn(*args)
        except Exception as exc:  # reported by the test's own assertions
            out["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, out


def answer(base: str) -> httpx.Response:
    return httpx.post(f"{base}/v1/answer", json={"question": QUESTION}, timeout=60)


def refused(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(2)
        return s.connect_ex(("127.0.0.1", port)) != 0


def wait_for(condition, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_sigterm_drains_requests_ends_streams_with_an_event_and_exits_zero(home, llm):
    release = threading.Event()
    llm.script("m-drain", Hang(3.0, then=Reply(content)),
               Reply(content, hold_after=1, release=release))
    drain = 10.0  # room on a loaded machine: streams end at 8 s, the process exits before 10
    with serve(home, llm, "m-drain", "--drain-timeout", str(drain)) as served:
        proc, base, port = served.proc, served.base, served.port
        slow, slow_out = in_background(answer, base)
        wait_for(lambda: len(llm.requests["m-drain"]) == 1)  # the answer waits on the model
        frames: list[tuple[str, dict]] = []

        def stream() -> int:
            with httpx.stream("POST", f"{base}/v1/answer/stream", json={"question": QUESTION},
                              timeout=60) as r:
                text = ""
                for chunk in r.iter_text():
                    text += chunk
                    while "\n\n" in text:
                        frame, text = text.split("\n\n", 1)
                        frames.extend(parse_sse(frame))
                return r.status_code

        streaming, stream_out = in_background(stream)
        wait_for(lambda: len(llm.requests["m-drain"]) == 2 and frames)  # mid-answer
        signalled = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        wait_for(lambda: refused(port), timeout=drain / 2)  # new connections: refused
        slow.join(timeout=30)
        assert slow_out["value"].status_code == 200, slow_out
        assert slow_out["value"].json()["grounded"]
        # The held stream is still open near the deadline: it ends with a final event.
        wait_for(lambda: frames and frames[-1][0] == "error", timeout=drain + 5)
        ended = time.monotonic() - signalled
        assert drain - STREAM_MARGIN - 0.5 < ended < drain, ended
        kind, data = frames[-1]
        assert data["code"] == "shutting_down" and "retry" in data["message"]
        assert frames[0][0] == "meta" and "done" not in [k for k, _ in frames]
        streaming.join(timeout=10)
        assert stream_out["value"] == 200, stream_out
        release.set()  # the model's next token: the step the stream left now returns
        assert proc.wait(timeout=drain) == 0
        assert time.monotonic() - signalled < drain
    logged = [json.loads(line) for line in served.stderr.splitlines() if line.startswith("{")]
    assert any(line.get("ended_by_drain") for line in logged), served.stderr[-2000:]


def test_every_worker_drains_and_the_supervisor_exits_zero(home, llm):
    llm.script("m-workers", Hang(3.0, then=Reply(content)))
    with serve(home, llm, "m-workers", "--workers", "2", "--drain-timeout", "20") as served:
        proc, base, port = served.proc, served.base, served.port
        requests = [in_background(answer, base) for _ in range(4)]
        wait_for(lambda: len(llm.requests["m-workers"]) == 4)
        signalled = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        wait_for(lambda: refused(port), timeout=5)
        for thread, out in requests:
            thread.join(timeout=30)
            assert out["value"].status_code == 200, out
        assert proc.wait(timeout=20) == 0
        assert time.monotonic() - signalled < 20


def test_streams_are_told_to_end_before_the_deadline_and_late_ones_at_once():
    import asyncio

    from citadel.server.drain import Drain

    async def run() -> None:
        drain = Drain()
        early = drain.stream_end()
        drain.begin(0.4)
        drain.begin(60)  # only the first call counts
        assert drain.draining and not early.done()
        started = asyncio.get_running_loop().time()
        await asyncio.wait_for(early, timeout=5)
        assert 0.1 < asyncio.get_running_loop().time() - started < 0.4  # half the drain
        assert drain.stream_end().done()  # a stream opened afterwards ends at once
        assert drain._watchdog is None  # only `citadel serve` may end the process

    asyncio.run(run())


class HeldEngine(Engine):
    """Streams its first event, then waits for `release` (a step that outlasts the drain)."""

    release = threading.Event()

    def stream(self, question, **kwargs):
        events = super().stream(question, **kwargs)

        def held():
            yield next(events)
            self.release.wait(30)
            yield from events

        return held()


@pytest.mark.parametrize(("path", "body"), [
    ("/v1/answer/stream", {"question": QUESTION}),
    ("/v1/chat/completions", {"model": MODEL_ID, "stream": True,
                              "messages": [{"role": "user", "content": QUESTION}]}),
])
def test_every_streaming_door_ends_in_its_own_format_when_the_drain_says_so(
        hashing_engine, path, body):
    engine = HeldEngine(hashing_engine.settings, hashing_engine.index, hashing_engine.embedder,
                        hashing_engine.generator)
    HeldEngine.release.clear()
    app = create_app(engine)
    with live_server(app) as url, httpx.stream("POST", url + path, json=body,
                                               timeout=30) as r:
        frames = r.iter_text()
        first = next(frames)  # the first event arrived; the next step is held
        assert "snapshot_id" in first
        app.state.drain.end_streams()
        rest = "".join(frames)  # the server ends the stream: no cut, a last frame
        HeldEngine.release.set()
    if path == "/v1/answer/stream":
        kind, data = parse_sse(rest)[-1]
        assert kind == "error" and data["code"] == "shutting_down"
    else:  # the OpenAI SDK raises on an `error` chunk
        last = json.loads(rest.strip().removeprefix("data: "))
        assert last["error"]["code"] == "shutting_down" and "retry" in last["error"]["message"]
    wait_for(lambda: not app.state.streams.open())  # closed once the held step returned
