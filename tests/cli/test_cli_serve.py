"""`citadel serve` as a real process: it serves the active snapshot on 127.0.0.1."""

import json
import os
import socket
import subprocess
import sys
import time

import httpx

from citadel.config import Settings
from citadel.ingest.pipeline import ingest
from citadel.retrieval.embedders.hashing import HashingEmbedder
from citadel.server.limits import ConnectionLimits
from tests.conftest import DEMO_KB, hashing_settings


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_ready(proc: subprocess.Popen, base: str, timeout: float) -> None:
    """Wait for a `citadel serve` process to answer /readyz with 200."""
    deadline = time.monotonic() + timeout
    while True:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        try:
            if httpx.get(f"{base}/readyz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, "server did not become ready"
        time.sleep(0.1)


def test_serve_answers_and_logs_one_json_line_per_request(tmp_path):
    ingest([DEMO_KB], hashing_settings(tmp_path), embedder=HashingEmbedder(), progress=False)
    port = free_port()
    env = {**os.environ, "CITADEL_HOME": str(tmp_path), "CITADEL_EMBEDDER": "hashing"}
    proc = subprocess.Popen([sys.executable, "-m", "citadel", "serve", "--port", str(port)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_ready(proc, base, 60)
        r = httpx.post(f"{base}/v1/answer", json={"question": "How long are gift cards valid?"},
                       headers={"X-Request-ID": "cli-1"}, timeout=30)
        assert r.status_code == 200 and r.json()["grounded"]
        assert httpx.get(base, timeout=10).headers["content-type"].startswith("text/html")
    finally:
        proc.terminate()
        _, stderr = proc.communicate(timeout=30)
    lines = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    mine = [line for line in lines if line["client_request_id"] == "cli-1"]
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


def test_serve_refuses_fewer_than_one_worker(tmp_path):
    from click.testing import CliRunner

    from citadel.cli.serve import serve

    for bad in ("0", "-2", "two"):
        result = CliRunner().invoke(serve, ["--workers", bad],
                                    env={"CITADEL_HOME": str(tmp_path)})
        assert result.exit_code == 2, result.output  # a usage error, before anything starts
        assert "--workers" in result.output and "Traceback" not in result.output


def _captured_run(monkeypatch, tmp_path, workers: int) -> dict:
    """Run `citadel serve` with uvicorn's runners replaced: what would have been run."""
    import uvicorn
    import uvicorn.supervisors
    from click.testing import CliRunner

    from citadel.cli.serve import serve

    seen: dict = {}

    def server_run(self, sockets=None):
        seen.update(runner="server", config=self.config, sockets=sockets)

    def multiprocess_run(self):
        seen.update(runner="multiprocess", config=self.config, sockets=self.sockets)

    monkeypatch.setattr(uvicorn.Server, "run", server_run)
    monkeypatch.setattr(uvicorn.supervisors.Multiprocess, "__init__",
                        lambda self, config, sockets: setattr(self, "config", config)
                        or setattr(self, "sockets", sockets))
    monkeypatch.setattr(uvicorn.supervisors.Multiprocess, "run", multiprocess_run)
    # Not this test process's loggers: serve (and a worker's app factory) install handlers.
    import logging

    import citadel.server.log_rate

    monkeypatch.setattr(citadel.server.log_rate, "install_server_logging",
                        lambda settings, level: logging.NullHandler())
    monkeypatch.setenv("CITADEL_HOME", str(tmp_path))
    monkeypatch.setenv("CITADEL_EMBEDDER", "hashing")
    monkeypatch.setenv("CITADEL_HTTP_MAX_CONNECTIONS", "77")
    result = CliRunner().invoke(serve, ["--port", "0", "--workers", str(workers)])
    assert result.exit_code == 0, result.output
    return seen


def test_one_worker_runs_the_app_in_this_process(monkeypatch, tmp_path):
    from fastapi import FastAPI

    seen = _captured_run(monkeypatch, tmp_path, 1)
    config = seen["config"]
    assert seen["runner"] == "server" and config.workers == 1
    assert isinstance(config.app, FastAPI) and not config.factory
    assert config.http.connection_limits.max_connections == 77 and config.access_log is False
    assert config.limit_concurrency is None  # the guarded protocol bounds connections
    assert seen["sockets"][0].proto == socket.IPPROTO_TCP  # server/listen.py


def test_workers_get_a_picklable_config_that_builds_the_app_in_each_worker(monkeypatch,
                                                                            tmp_path):
    import pickle

    from fastapi import FastAPI

    from citadel.server.uvicorn_config import HEALTHCHECK_TIMEOUT, WORKER_PROTOCOL

    seen = _captured_run(monkeypatch, tmp_path, 3)
    config = seen["config"]
    assert seen["runner"] == "multiprocess" and config.workers == 3
    assert config.factory and config.limit_concurrency is None and config.log_config is None
    # Each worker builds its protocol from the settings it loads (CITADEL_HTTP_MAX_CONNECTIONS).
    assert ConnectionLimits.from_settings(Settings.load()).max_connections == 77
    assert config.timeout_worker_healthcheck == HEALTHCHECK_TIMEOUT
    assert seen["sockets"][0].proto == socket.IPPROTO_TCP
    # Spawned workers receive the config pickled: the app factory and the protocol must cross.
    clone = pickle.loads(pickle.dumps(config))
    assert config.http == WORKER_PROTOCOL == "citadel.server.workers:GuardedH11Protocol"
    app = clone.app()  # what a worker runs: its own app, from its own settings
    assert isinstance(app, FastAPI) and app.state.provider.peek() is None  # opened lazily
    from uvicorn.importer import import_from_string
    from uvicorn.protocols.http.h11_impl import H11Protocol

    protocol = import_from_string(config.http)
    assert issubclass(protocol, H11Protocol) and protocol.__name__ == "GuardedH11Protocol"


def test_two_workers_serve_and_log_to_one_request_log(tmp_path):
    ingest([DEMO_KB], hashing_settings(tmp_path), embedder=HashingEmbedder(), progress=False)
    port = free_port()
    env = {**os.environ, "CITADEL_HOME": str(tmp_path), "CITADEL_EMBEDDER": "hashing"}
    proc = subprocess.Popen([sys.executable, "-m", "citadel", "serve", "--port", str(port),
                             "--workers", "2", "--log-level", "warning"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_ready(proc, base, 120)
        for i in range(8):  # new connections: the kernel hands them to either worker
            r = httpx.post(f"{base}/v1/answer", json={"question": "How long are gift cards valid?"},
                           headers={"X-Request-ID": f"w-{i}"}, timeout=60)
            assert r.status_code == 200 and r.json()["grounded"]
    finally:
        proc.terminate()
        proc.communicate(timeout=60)
    assert proc.returncode == 0
    from citadel.observability.request_log import RequestLog

    logged = {r.client_request_id for r in RequestLog(tmp_path / "requests.sqlite").records()}
    assert {f"w-{i}" for i in range(8)} <= logged
