"""`citadel serve` as a real process: it serves the active snapshot on 127.0.0.1."""

import json
import os
import socket
import subprocess
import sys
import time

import httpx

from citadel.ingest.pipeline import ingest
from citadel.retrieval.embedders.hashing import HashingEmbedder
from tests.conftest import DEMO_KB, hashing_settings


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_serve_answers_and_logs_one_json_line_per_request(tmp_path):
    ingest([DEMO_KB], hashing_settings(tmp_path), embedder=HashingEmbedder(), progress=False)
    port = free_port()
    env = {**os.environ, "CITADEL_HOME": str(tmp_path), "CITADEL_EMBEDDER": "hashing"}
    proc = subprocess.Popen([sys.executable, "-m", "citadel", "serve", "--port", str(port)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, proc.stderr.read()
            try:
                if httpx.get(f"{base}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "server did not become ready"
            time.sleep(0.1)
        r = httpx.post(f"{base}/v1/answer", json={"question": "How long are gift cards valid?"},
                       headers={"X-Request-ID": "cli-1"}, timeout=30)
        assert r.status_code == 200 and r.json()["grounded"]
        assert httpx.get(base, timeout=10).headers["content-type"].startswith("text/html")
    finally:
        proc.terminate()
        _, stderr = proc.communicate(timeout=30)
    lines = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    mine = [line for line in lines if line["request_id"] == "cli-1"]
    assert len(mine) == 1
    assert mine[0]["path"] == "/v1/answer" and mine[0]["status"] == 200
    assert mine[0]["citations_emitted"] >= 1 and mine[0]["backend"] == "local"


def test_serve_refuses_a_bad_or_busy_port(tmp_path):
    env = {**os.environ, "CITADEL_HOME": str(tmp_path), "CITADEL_EMBEDDER": "hashing"}
    out = subprocess.run([sys.executable, "-m", "citadel", "serve", "--port", "99999"],
                         capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode != 0 and "Traceback" not in out.stderr
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        out = subprocess.run([sys.executable, "-m", "citadel", "serve", "--port", str(port)],
                             capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in out.stderr
