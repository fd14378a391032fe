"""The HTTP server under hostile or careless clients: idle and slow sockets, clients that
leave, requests with a forged Host, sloppy JSON types; and what error bodies give away."""

import json
import logging
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import uvicorn
from fastapi.testclient import TestClient

from citadel.config import Settings
from citadel.server import create_app
from citadel.server.listen import listening_socket
from tests.conftest import hashing_settings
from tests.live_server import live_server

ABSOLUTE_PATH = re.compile(r"(?<![\w:/.])/(?:root|home|tmp|srv|var|usr)\b")


@pytest.fixture(scope="module")
def client(hashing_engine):
    with TestClient(create_app(hashing_engine), base_url="http://localhost") as c:
        yield c


# --- 5. strict numbers and booleans -------------------------------------------------------


@pytest.mark.parametrize("top_k", [True, False, "3", 3.5])
def test_top_k_must_be_a_json_integer_not_a_boolean_or_string(client, top_k):
    r = client.post("/v1/answer", json={"question": "How long are gift cards valid?",
                                        "top_k": top_k})
    assert r.status_code == 422
    error = r.json()["error"]
    assert error["code"] == "invalid_request" and "top_k" in error["message"]
    assert "integer" in error["message"]


@pytest.mark.parametrize("top_k", [3, 3.0])
def test_top_k_as_an_integer_is_still_accepted(client, top_k):
    # 3.0 is an integer in JSON Schema, which the OpenAPI document promises.
    r = client.post("/v1/answer", json={"question": "How long are gift cards valid?",
                                        "top_k": top_k})
    assert r.status_code == 200


# --- 3. 503 bodies say what to do, not where the files are --------------------------------


def test_not_ready_bodies_say_run_ingest_without_the_servers_paths(tmp_path):
    home = tmp_path / "empty-home"
    with TestClient(create_app(Settings(home=home, embedder="hashing")),
                    base_url="http://localhost") as c:
        answer = c.post("/v1/answer", json={"question": "anything?"})
        ready = c.get("/readyz")
    assert answer.status_code == 503 and ready.status_code == 503
    for text in (answer.json()["error"]["message"], ready.json()["reason"]):
        assert "citadel ingest" in text
        assert str(tmp_path) not in text and not ABSOLUTE_PATH.search(text), text


def test_a_mismatched_snapshot_is_explained_without_paths(hashing_engine):
    # The demo snapshot was built with the hashing embedder; this config runs MiniLM.
    settings = Settings(home=hashing_engine.settings.home, embedder="minilm")
    with TestClient(create_app(settings), base_url="http://localhost") as c:
        answer = c.post("/v1/answer", json={"question": "anything?"})
        ready = c.get("/readyz")
    assert answer.status_code == 503 and ready.status_code == 503
    for text in (answer.json()["error"]["message"], ready.json()["reason"]):
        assert "does not match the running configuration" in text
        assert str(hashing_engine.settings.home) not in text and not ABSOLUTE_PATH.search(text)


# --- 4. Host allow-list (DNS rebinding) and browser hardening headers -------------------


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8000", "127.0.0.1.evil.example",
                                  "localhost.evil.example", ""])
def test_a_foreign_host_header_is_refused_with_400_json(client, host):
    r = client.get("/healthz", headers={"host": host})
    assert r.status_code == 400
    assert r.headers["content-type"] == "application/json"
    assert r.json()["error"]["code"] == "bad_host"


@pytest.mark.parametrize("host", ["localhost", "localhost:8000", "127.0.0.1:1234", "[::1]:80",
                                  "LOCALHOST."])
def test_loopback_host_headers_with_any_port_are_served(client, host):
    assert client.get("/healthz", headers={"host": host}).status_code == 200


def test_configured_and_bound_hosts_are_served(hashing_engine, tmp_path):
    settings = hashing_settings(hashing_engine.settings.home,
                                http_allowed_hosts=("kb.example", "api.example:8443"))
    app = create_app(settings, bind_host="citadel.lan")
    with TestClient(app, base_url="http://localhost") as c:
        assert c.get("/healthz", headers={"host": "kb.example:9"}).status_code == 200
        assert c.get("/healthz", headers={"host": "api.example:8443"}).status_code == 200
        assert c.get("/healthz", headers={"host": "api.example:80"}).status_code == 400
        assert c.get("/healthz", headers={"host": "citadel.lan:8000"}).status_code == 200
        assert c.get("/healthz", headers={"host": "evil.example"}).status_code == 400


@pytest.mark.parametrize("path", ["/", "/healthz", "/static/app.js", "/docs", "/nope"])
def test_every_response_carries_the_browser_hardening_headers(client, path):
    r = client.get(path)
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["x-frame-options"] == "DENY"
    assert r.headers["referrer-policy"] == "no-referrer"
    csp = r.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in csp and "'unsafe-inline'" not in csp
    assert "script-src 'self'" in csp


def test_the_refusal_of_a_foreign_host_carries_the_headers_too(client):
    r = client.get("/healthz", headers={"host": "evil.example"})
    assert r.headers["x-frame-options"] == "DENY" and "content-security-policy" in r.headers


# --- 1. starvation: idle sockets, slowloris, slow bodies; a bounded log -------------------


@contextmanager
def guarded_server(app, **limits) -> Iterator[int]:
    """`app` under the uvicorn configuration `citadel serve` uses, on a free port."""
    from citadel.server.uvicorn_config import server_config

    settings = Settings(home=Path("unused"), **{"http_header_timeout": 1.0,
                                                "http_body_timeout": 1.0, **limits})
    sock = listening_socket("127.0.0.1", 0)
    server = uvicorn.Server(server_config(app, settings, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "server did not start"
        time.sleep(0.02)
    try:
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


def connect_from(address: str, port: int) -> socket.socket:
    """A client socket from another loopback address (Linux routes all of 127/8 to lo), so
    the per-client cap tells the attacker from the well-behaved client on 127.0.0.1."""
    s = socket.socket()
    s.bind((address, 0))
    s.connect(("127.0.0.1", port))
    return s


def read_until_closed(s: socket.socket, within: float) -> bytes | None:
    """What the server sent before closing, or None if it kept the socket open."""
    s.settimeout(within)
    data = b""
    try:
        while chunk := s.recv(4096):
            data += chunk
    except TimeoutError:
        return None
    except ConnectionResetError:
        pass
    return data


def healthz_ms(port: int) -> float:
    started = time.perf_counter()
    r = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5)
    assert r.status_code == 200
    return (time.perf_counter() - started) * 1000


def test_idle_sockets_beyond_the_per_client_cap_are_refused_and_healthz_answers(client):
    # A long header timeout: the ten admitted sockets must stay open while the rest arrive.
    with guarded_server(client.app, http_max_connections_per_client=10,
                        http_header_timeout=20.0) as port:
        hoard = [connect_from("127.0.0.2", port) for _ in range(40)]
        try:
            assert healthz_ms(port) < 5000
            answers = [read_until_closed(s, within=5) for s in hoard[10:]]
            assert all(a is not None and a.startswith(b"HTTP/1.1 503") for a in answers)
            assert b"too_many_connections" in answers[0]
        finally:
            for s in hoard:
                s.close()


def test_an_idle_socket_is_closed_after_the_header_timeout(client):
    with guarded_server(client.app) as port, connect_from("127.0.0.2", port) as idle:
        started = time.monotonic()
        assert read_until_closed(idle, within=15) == b""  # closed, nothing to answer
        assert time.monotonic() - started < 10


def test_slowloris_headers_are_cut_off_while_healthz_answers(client):
    request = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Pad: " + b"a" * 200
    with guarded_server(client.app) as port, connect_from("127.0.0.3", port) as slow:
        slow.settimeout(0.05)
        started, reply = time.monotonic(), None
        for i, byte in enumerate(request):  # one byte per 50 ms: ~12 s if nobody stops it
            if i % 20 == 0:
                assert healthz_ms(port) < 5000
            try:
                slow.send(bytes([byte]))
                reply = slow.recv(4096)  # the server spoke (408) or closed (b"")
                break
            except TimeoutError:
                continue  # still open: keep trickling
            except OSError:
                reply = b""
                break
        assert reply is not None, "the trickling connection was never cut off"
        assert reply == b"" or reply.startswith(b"HTTP/1.1 408")
        assert time.monotonic() - started < 8


class FakeConnection:
    def __init__(self, name):
        self.name, self.was_shed = name, False

    def shed(self):
        self.was_shed = True


def test_a_full_table_sheds_the_connection_waiting_longest_for_its_headers():
    from citadel.server.limits import ConnectionTable

    table = ConnectionTable(per_client=0, total=3)
    first, second, third = (FakeConnection(n) for n in ("first", "second", "third"))
    for conn, address in ((first, "10.0.0.1"), (second, "10.0.0.2"), (third, "10.0.0.3")):
        assert table.admit(address) is None
        table.waiting(conn, address)
    table.waiting(first, None)  # its request arrived: no longer sheddable
    assert table.admit("10.0.0.9") is None
    assert (first.was_shed, second.was_shed, third.was_shed) == (False, True, False)
    assert table.open == 3  # the shed one's slot went to the newcomer
    assert table.count("10.0.0.2") == 0 and table.count("10.0.0.9") == 1


def test_a_connection_back_to_waiting_goes_to_the_back_of_the_line():
    from citadel.server.limits import ConnectionTable

    table = ConnectionTable(per_client=0, total=2)
    old, new = FakeConnection("old"), FakeConnection("new")
    for conn in (old, new):
        table.admit("10.0.0.1")
        table.waiting(conn, "10.0.0.1")
    table.waiting(old, None)        # served a request ...
    table.waiting(old, "10.0.0.1")  # ... and waits for the next one: it is now the newest idler
    table.admit("10.0.0.2")
    assert new.was_shed and not old.was_shed


def test_a_full_table_sheds_from_the_address_holding_the_most_waiting_connections():
    """A client with one idle connection keeps it while another address holds several."""
    from citadel.server.limits import ConnectionTable

    table = ConnectionTable(per_client=0, total=4)
    mine = FakeConnection("mine")
    theirs = [FakeConnection(f"theirs-{i}") for i in range(3)]
    for conn, address in ((mine, "10.0.0.1"), *((c, "10.0.0.66") for c in theirs)):
        table.admit(address)
        table.waiting(conn, address)
    for _ in range(2):
        assert table.admit("10.0.0.7") is None
    assert [c.was_shed for c in theirs] == [True, True, False] and not mine.was_shed
    table.waiting(FakeConnection("newcomer"), "10.0.0.7")
    assert table.admit("10.0.0.8") is None  # 1 waiting each now: the oldest of them goes
    assert mine.was_shed and not theirs[2].was_shed


def test_the_table_sheds_as_a_plain_scan_would_through_any_sequence_of_events():
    """The heap behind `admit` against the rule it implements, over random events: the oldest
    waiting connection of the address with the most (of equals, the one whose count of
    waiting connections changed first)."""
    import itertools
    import random

    from citadel.server.limits import ConnectionTable

    rng = random.Random(7)
    table = ConnectionTable(per_client=0, total=30)
    ticks = itertools.count()
    since: dict[FakeConnection, tuple[str, int]] = {}  # waiting connection -> address, when
    changed: dict[str, int] = {}  # address -> when its count of waiting last changed
    open_connections: dict[FakeConnection, str] = {}

    def expected_victim(newcomer: str) -> FakeConnection | None:
        waiting = [a for a, _ in since.values()]
        if len(open_connections) < 30 or not waiting:
            return None
        most = max(map(waiting.count, waiting))
        address = min({a for a in waiting if waiting.count(a) == most}, key=changed.get)
        held = list(open_connections.values())
        if held.count(address) <= held.count(newcomer):
            return None  # never from a client holding no more than the newcomer
        return min((c for c, (a, _) in since.items() if a == address),
                   key=lambda c: since[c][1])

    def wait(conn: FakeConnection, address: str | None) -> None:
        table.waiting(conn, address)
        before = since.pop(conn, None)
        if before is not None:
            changed[before[0]] = next(ticks)
        if address is not None:
            since[conn] = (address, next(ticks))
            changed[address] = since[conn][1]

    shed = 0
    for step in range(4000):
        action = rng.random()
        if action < 0.55:  # a new connection
            address = f"10.0.0.{rng.randrange(6)}"
            victim = expected_victim(address)
            if table.admit(address) is not None:
                assert len(open_connections) >= 30 and victim is None, step
                continue
            if victim is not None:
                assert victim.was_shed, step
                shed += 1
                del open_connections[victim]
                wait(victim, None)
            conn = FakeConnection(step)
            open_connections[conn] = address
            wait(conn, address)
        elif open_connections:
            conn = rng.choice(list(open_connections))
            address = open_connections[conn]
            if action < 0.8:  # its request arrives, or it waits for the next one
                wait(conn, None if conn in since else address)
            else:  # it closes
                wait(conn, None)
                table.release(address)
                del open_connections[conn]
        assert not any(c.was_shed for c in open_connections), step
    assert table.open == len(open_connections) and shed > 500


def test_a_client_never_takes_the_waiting_connection_of_one_holding_no_more():
    from citadel.server.limits import ConnectionTable

    table = ConnectionTable(per_client=0, total=3)
    legit, busy, other = FakeConnection("legit"), FakeConnection("busy"), FakeConnection("b")
    table.admit("10.0.0.1")
    table.waiting(legit, "10.0.0.1")  # a client's one connection, its request on the way
    for conn in (busy, other):
        table.admit("10.0.0.66")
        table.busy(conn, "10.0.0.66")
    assert table.admit("10.0.0.66") == "full"  # holds 2: may not shed one holding 1
    assert not legit.was_shed
    assert table.admit("10.0.0.7") is None and legit.was_shed  # holding none, it may


def test_a_full_table_sheds_the_longest_running_request_of_the_client_holding_the_most():
    """Long-lived responses count against the client that holds them: when nothing waits,
    a newcomer takes the slot of the longest-running request of the client holding the most
    connections, if that client holds at least two more than the newcomer."""
    from citadel.server.limits import ConnectionTable

    table = ConnectionTable(per_client=0, total=5)
    streams = [FakeConnection(f"stream-{i}") for i in range(3)]
    mine = FakeConnection("mine")
    for conn, address in ((mine, "10.0.0.1"), *((c, "10.0.0.66") for c in streams)):
        table.admit(address)
        table.busy(conn, address)
    table.admit("10.0.0.2")
    table.busy(FakeConnection("other"), "10.0.0.2")
    assert table.admit("10.0.0.7") is None
    assert [c.was_shed for c in streams] == [True, False, False] and not mine.was_shed
    assert table.count("10.0.0.66") == 2 and table.open == 5
    assert table.admit("10.0.0.1") == "full"  # 2 is not two more than its own 1


def test_a_full_table_of_clients_holding_one_each_refuses_the_newcomer():
    from citadel.server.limits import ConnectionTable

    table = ConnectionTable(per_client=0, total=2)
    first, second = FakeConnection("first"), FakeConnection("second")
    for conn, address in ((first, "10.0.0.1"), (second, "10.0.0.2")):
        table.admit(address)
        table.busy(conn, address)
    assert table.admit("10.0.0.3") == "full"  # one each: nobody holds more
    table.busy(first, None)  # its response is complete ...
    table.waiting(first, "10.0.0.1")  # ... and it waits for the next request: sheddable
    assert table.admit("10.0.0.3") is None and first.was_shed


def test_a_full_table_with_every_request_in_progress_refuses_the_newcomer():
    from citadel.server.limits import ConnectionTable

    table = ConnectionTable(per_client=2, total=2)
    assert table.admit("10.0.0.1") is None and table.admit("10.0.0.1") is None
    assert table.admit("10.0.0.1") == "client"  # the per-client cap comes first
    assert table.admit("10.0.0.2") == "full"
    table.release("10.0.0.1")
    assert table.admit("10.0.0.2") is None


def serve_legitimately(port: int, seconds: float) -> list[int]:
    """A well-behaved client on 127.0.0.1 for `seconds`: a new connection per request,
    `/healthz` and `/v1/answer` in turn; the status of each (0: no response)."""
    statuses: list[int] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if len(statuses) % 2:
                r = httpx.post(f"http://127.0.0.1:{port}/v1/answer", timeout=10,
                               json={"question": "How long are gift cards valid?"})
            else:
                r = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=10)
            statuses.append(r.status_code)
        except httpx.HTTPError:
            statuses.append(0)
    return statuses


def test_slow_clients_from_many_addresses_do_not_keep_legitimate_requests_out(client):
    from tests.slow_clients import SlowClients

    # 8 addresses x 15 slow sockets, each under the per-client cap, 120 in all for 60 slots;
    # a header timeout longer than the attack: only shedding can free a slot.
    with (guarded_server(client.app, http_max_connections=60,
                         http_max_connections_per_client=20, http_header_timeout=30.0) as port,
          SlowClients(port, addresses=8, per_address=15, trickle_every=0.2) as attack):
        time.sleep(1.0)  # every slot taken, the rest reconnecting
        statuses = serve_legitimately(port, seconds=4.0)
    assert len(statuses) >= 10, statuses
    served = statuses.count(200) / len(statuses)
    assert served >= 0.95, (statuses, attack.counts)
    # The attackers were shed (a 503 naming why when they had started a request), not timed out.
    assert attack.counts.closed_by_server > 0
    assert set(attack.counts.answers) <= {"HTTP/1.1 503 Service Unavailable"}, attack.counts


def test_a_shed_connection_is_told_why(client):
    with (guarded_server(client.app, http_max_connections=2, http_header_timeout=30.0) as port,
          connect_from("127.0.0.2", port) as slow, connect_from("127.0.0.3", port) as idle):
        slow.sendall(b"GET /healthz HTTP/1.1\r\nHost: local")
        time.sleep(0.2)
        assert healthz_ms(port) < 5000  # sheds the oldest waiting: `slow`
        reply = read_until_closed(slow, within=5)
        assert reply is not None and reply.startswith(b"HTTP/1.1 503")
        assert b"connection_shed" in reply and b"send the whole request" in reply
        assert read_until_closed(idle, within=0.5) is None  # still open: it came later


def test_a_negative_content_length_gets_a_json_400(client):
    with guarded_server(client.app) as port, connect_from("127.0.0.2", port) as s:
        s.sendall(b"POST /v1/answer HTTP/1.1\r\nHost: localhost\r\n"
                  b"Content-Type: application/json\r\nContent-Length: -5\r\n\r\n{}")
        reply = read_until_closed(s, within=10)
    assert reply is not None and reply.startswith(b"HTTP/1.1 400")
    head, body = reply.split(b"\r\n\r\n", 1)
    assert b"content-type: application/json" in head.lower()
    error = json.loads(body)["error"]
    assert error["code"] == "invalid_http" and "Content-Length" in error["message"]


def test_a_body_that_never_finishes_is_cut_off_and_logged_as_a_disconnect(client, caplog):
    caplog.set_level(logging.INFO, logger="citadel.http")
    with guarded_server(client.app) as port, connect_from("127.0.0.2", port) as slow:
        slow.sendall(b"POST /v1/answer HTTP/1.1\r\nHost: localhost\r\nX-Request-ID: slow-1\r\n"
                     b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"qu")
        assert read_until_closed(slow, within=15) is not None
        deadline = time.monotonic() + 10
        while not (lines := request_lines(caplog, "slow-1")) and time.monotonic() < deadline:
            time.sleep(0.05)
    assert [line["status"] for line in lines] == [499]


def test_server_log_output_is_rate_limited_with_a_suppressed_summary():
    from citadel.server.log_rate import RateLimitedHandler

    now = [0.0]
    written: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record):
            written.append(record.getMessage())

    handler = RateLimitedHandler(Collect(), per_second=5, clock=lambda: now[0])
    logger = logging.getLogger("test.flood")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        for i in range(10_000):
            logger.warning("Invalid HTTP request received. %d", i)
        now[0] = 1.5
        logger.warning("after the flood")
    finally:
        logger.removeHandler(handler)
    assert len(written) == 5 + 2
    assert "suppressed 9995 log lines" in written[5] and "Invalid HTTP request" in written[5]
    assert written[-1] == "after the flood"


def test_the_one_line_per_request_is_not_rate_limited():
    from citadel.server.log_rate import RateLimitedHandler
    from citadel.server.request_log import PER_REQUEST

    written: list[logging.LogRecord] = []

    class Collect(logging.Handler):
        def emit(self, record):
            written.append(record)

    handler = RateLimitedHandler(Collect(), per_second=5, clock=lambda: 0.0,
                                 exempt=lambda r: getattr(r, PER_REQUEST, False))
    for _ in range(100):
        handler.handle(logging.makeLogRecord({"msg": "{}", PER_REQUEST: True}))
    assert len(written) == 100


# --- 2. a client that leaves is a disconnect, not a server error --------------------------


def request_lines(caplog, client_request_id: str) -> list[dict]:
    lines = [json.loads(r.getMessage()) for r in caplog.records
             if r.name == "citadel.http" and r.getMessage().startswith("{")]
    return [line for line in lines if line.get("client_request_id") == client_request_id]


def test_a_client_that_leaves_mid_body_is_logged_as_499_not_500(client, caplog):
    caplog.set_level(logging.INFO, logger="citadel.http")
    with live_server(client.app) as url:
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port)) as gone:
            gone.sendall(b"POST /v1/answer HTTP/1.1\r\nHost: localhost\r\n"
                         b"X-Request-ID: gone-499\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 100\r\n\r\n{\"question\": ")
            time.sleep(0.2)
        deadline = time.monotonic() + 10
        while not (lines := request_lines(caplog, "gone-499")) and time.monotonic() < deadline:
            time.sleep(0.05)
    assert len(lines) == 1
    assert lines[0]["status"] == 499 and lines[0]["client_disconnected"] is True


# --- `citadel serve` runs with all of the above -------------------------------------------


def test_citadel_serve_applies_the_limits_headers_hosts_and_log_rate(hashing_engine):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("CITADEL_")}
    env.update(CITADEL_HOME=str(hashing_engine.settings.home), CITADEL_EMBEDDER="hashing",
               CITADEL_HTTP_HEADER_TIMEOUT="1", CITADEL_HTTP_MAX_CONNECTIONS_PER_CLIENT="2",
               CITADEL_LOG_LINES_PER_SECOND="3")
    proc = subprocess.Popen([sys.executable, "-m", "citadel", "serve", "--port", str(port)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, proc.stderr.read()
            try:
                healthz_ms(port)
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline, "server did not start"
                time.sleep(0.1)
        r = httpx.get(f"http://127.0.0.1:{port}/healthz", headers={"host": "evil.example"})
        assert r.status_code == 400 and r.headers["x-frame-options"] == "DENY"
        with connect_from("127.0.0.2", port) as idle:
            assert read_until_closed(idle, within=15) == b""  # the header timeout
        hoard = [connect_from("127.0.0.2", port) for _ in range(30)]  # 28 refused, logged
        assert healthz_ms(port) < 5000
        for s in hoard:
            s.close()
        time.sleep(1.2)
        healthz_ms(port)  # a line in the next second brings the summary
    finally:
        proc.terminate()
        _, stderr = proc.communicate(timeout=30)
    refusals = [line for line in stderr.splitlines() if "refused a connection" in line]
    assert 1 <= len(refusals) <= 15  # 3 a second, not one per refused connection (28)
    assert any("suppressed" in line for line in stderr.splitlines())


# --- 6. the header limit holds however the headers arrive; 7. a declared oversized body -----


def reply_to(port: int, *parts: bytes, within: float = 10) -> tuple[bytes, dict]:
    """Send `parts` (a pause between them) and read the reply: its status line and JSON."""
    with connect_from("127.0.0.2", port) as s:
        for i, part in enumerate(parts):
            if i:
                time.sleep(0.2)
            s.sendall(part)
        reply = read_until_closed(s, within=within)
    assert reply, "no reply before the connection closed (or it stayed open)"
    head, _, body = reply.partition(b"\r\n\r\n")
    assert b"content-type: application/json" in head.lower(), head
    return head.split(b"\r\n", 1)[0], json.loads(body)


def oversized_header(size: int) -> bytes:
    return (b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Pad: " + b"a" * size
            + b"\r\nConnection: close\r\n\r\n")


@pytest.mark.parametrize("size", [17_000, 100_000])
def test_headers_over_the_limit_sent_at_once_are_refused_with_431(client, size):
    with guarded_server(client.app) as port:
        status, body = reply_to(port, oversized_header(size))
    assert status == b"HTTP/1.1 431 Request Header Fields Too Large"
    assert body["error"]["code"] == "headers_too_large" and "16384" in body["error"]["message"]


def test_headers_over_the_limit_sent_in_two_halves_are_refused_with_431(client):
    request = oversized_header(20_000)
    with guarded_server(client.app) as port:
        status, body = reply_to(port, request[:10_000], request[10_000:])
    assert status.startswith(b"HTTP/1.1 431") and body["error"]["code"] == "headers_too_large"


def test_headers_within_the_limit_are_served(client):
    with guarded_server(client.app) as port:
        status, body = reply_to(port, oversized_header(15_000))
    assert status == b"HTTP/1.1 200 OK" and body == {"status": "ok"}


@pytest.mark.parametrize("path", ["/v1/answer", "/v1/chat/completions"])
def test_a_declared_oversized_body_is_refused_at_once_from_its_header(client, path):
    # The body timeout is far away: the 413 comes from the header, not from a timeout.
    with guarded_server(client.app, http_body_timeout=60.0) as port:
        started = time.monotonic()
        status, body = reply_to(port, f"POST {path} HTTP/1.1\r\nHost: localhost\r\n"
                                      "Content-Type: application/json\r\n"
                                      "Content-Length: 70000\r\n\r\n".encode(), within=30)
        assert time.monotonic() - started < 20
    assert status.startswith(b"HTTP/1.1 413")
    assert body["error"]["code"] == "too_large" and "70000" in body["error"]["message"]


# --- long-lived responses: GET /mcp, answer and chat streams ---------------------------------


def endless_streams(base, pause: float = 0.25, **settings):
    """An engine whose answer streams never end on their own, with `settings`: the app and
    the server read the same settings in `citadel serve`, so they do here too."""
    from tests.server.test_http_streaming import SlowStreamEngine

    engine = SlowStreamEngine(base, pause=pause)
    engine.settings = Settings.model_validate({**base.settings.model_dump(), **settings})
    return engine


def test_long_lived_responses_from_many_addresses_do_not_keep_legitimate_requests_out(
        hashing_engine):
    from tests.security.stream_holders import StreamHolders

    # 16 addresses x 4 sockets (each address under the per-client cap) ask for responses that
    # never end on their own (`GET /mcp`, and answer and chat streams of an engine whose
    # stream never ends), 64 for 40 slots: held, they would leave no slot to anyone else.
    limits = {"http_max_connections": 40, "http_max_connections_per_client": 15}
    # Each stream's step waits (as on a remote model) holding an answer slot; a server for
    # such a generator raises max_concurrent_answers, or the answers queue behind the steps.
    app = create_app(endless_streams(hashing_engine, max_concurrent_answers=64, **limits))
    with (guarded_server(app, http_header_timeout=30.0, **limits) as port,
          StreamHolders(port, addresses=16, per_address=4) as attack):
        time.sleep(1.5)  # the attack at its size
        statuses = serve_legitimately(port, seconds=4.0)
    assert len(statuses) >= 10, statuses
    served = statuses.count(200) / len(statuses)
    assert served >= 0.95, (statuses, attack.counts)
    answers = attack.counts.answers
    assert answers["mcp 405"] > 0 and answers["mcp 200"] == 0, answers
    assert attack.counts.most_held <= 20, attack.counts  # at most half the connections
    assert answers["answer 503"] + answers["chat 503"] > 0, answers  # refused, not queued


def test_get_and_delete_on_the_stateless_mcp_door_are_405_at_once(client):
    with guarded_server(client.app) as port:
        for method in ("GET", "DELETE"):
            r = httpx.request(method, f"http://127.0.0.1:{port}/mcp", timeout=10,
                              headers={"Accept": "text/event-stream"})
            assert r.status_code == 405 and r.headers["allow"] == "POST"
            error = r.json()["error"]
            assert error["code"] == "method_not_allowed" and "stateless" in error["message"]


def open_stream(port: int, path: str, address: str, headers: dict | None = None) -> tuple:
    """Ask for a stream from `address`: the response's head (and the whole of a refusal),
    and the socket, still open for a stream."""
    body = (json.dumps({"question": "How long are gift cards valid?"}) if path != CHAT_PATH
            else json.dumps({"model": "citadel", "stream": True,
                             "messages": [{"role": "user", "content": "Gift cards?"}]}))
    extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    s = connect_from(address, port)
    s.sendall(f"POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
              f"Connection: close\r\n{extra}Content-Length: {len(body)}\r\n\r\n{body}"
              .encode())
    s.settimeout(10)
    reply = b""
    while b"\r\n\r\n" not in reply and (chunk := s.recv(65536)):
        reply += chunk
    if not reply.startswith(b"HTTP/1.1 200"):
        reply += read_until_closed(s, within=10) or b""
    return reply, s


CHAT_PATH = "/v1/chat/completions"


@pytest.mark.parametrize("path", ["/v1/answer/stream", CHAT_PATH])
def test_streams_beyond_an_addresss_limit_are_429_in_the_doors_shape(hashing_engine, path):
    app = create_app(endless_streams(hashing_engine, http_max_streams_per_client=2))
    with guarded_server(app) as port:
        held = [open_stream(port, path, "127.0.0.2") for _ in range(2)]
        try:
            assert all(first.startswith(b"HTTP/1.1 200") for first, _ in held)
            refused, s = open_stream(port, path, "127.0.0.2")
            s.close()
            other, s = open_stream(port, path, "127.0.0.3")  # another address is not refused
            s.close()
        finally:
            for _, sock in held:
                sock.close()
    assert refused.startswith(b"HTTP/1.1 429") and b"retry-after: 2" in refused.lower()
    error = json.loads(refused.split(b"\r\n\r\n", 1)[1])["error"]
    assert error["code"] == "too_many_streams" and "your address" in error["message"]
    if path == CHAT_PATH:
        assert error["type"] == "rate_limit_error"  # OpenAI's shape: the SDK raises on it
    assert other.startswith(b"HTTP/1.1 200")


def test_streams_beyond_a_keys_limit_are_429_from_any_address(hashing_engine):
    key = {"X-API-Key": "stream-key-0123456789"}
    app = create_app(endless_streams(hashing_engine, http_max_streams_per_key=2,
                                     api_keys={"stream-key-0123456789": ""}))
    with guarded_server(app) as port:
        held = [open_stream(port, "/v1/answer/stream", f"127.0.0.{i}", key) for i in (2, 3)]
        try:
            refused, s = open_stream(port, "/v1/answer/stream", "127.0.0.4", key)
            s.close()
            keyless, s = open_stream(port, "/v1/answer/stream", "127.0.0.4")
            s.close()
        finally:
            for _, sock in held:
                sock.close()
    assert refused.startswith(b"HTTP/1.1 429") and b"your API key" in refused
    assert keyless.startswith(b"HTTP/1.1 200")


def test_the_streams_of_all_callers_take_at_most_half_the_connections(hashing_engine):
    settings = {"http_max_connections": 8, "http_max_connections_per_client": 0}
    app = create_app(endless_streams(hashing_engine, **settings))
    with guarded_server(app, **settings) as port:
        held = [open_stream(port, "/v1/answer/stream", f"127.0.0.{i}") for i in range(2, 6)]
        try:
            refused, s = open_stream(port, "/v1/answer/stream", "127.0.0.9")
            s.close()
            assert healthz_ms(port) < 5000
        finally:
            for _, sock in held:
                sock.close()
    assert all(first.startswith(b"HTTP/1.1 200") for first, _ in held)
    assert refused.startswith(b"HTTP/1.1 503") and b"too_many_streams" in refused


def eventually(condition, within: float = 10) -> bool:
    deadline = time.monotonic() + within
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return condition()


def read_stream(s: socket.socket, within: float) -> bytes:
    s.settimeout(within)
    data = b""
    while chunk := s.recv(65536):
        data += chunk
    return data


@pytest.mark.parametrize("path", ["/v1/answer/stream", CHAT_PATH])
def test_a_stream_ends_with_a_final_event_at_its_time_limit(hashing_engine, path, caplog):
    caplog.set_level(logging.INFO, logger="citadel.http")
    app = create_app(endless_streams(hashing_engine, pause=0.05, http_stream_max_seconds=1.0))
    with guarded_server(app) as port:
        first, s = open_stream(port, path, "127.0.0.2", {"X-Request-ID": f"limit-{path[-6:]}"})
        with s:
            started = time.monotonic()
            rest = read_stream(s, within=20)
            assert time.monotonic() - started < 15  # ended by the server, not by this test
        assert eventually(lambda: app.state.stream_counts.open == 0)  # its lease given back
    text = (first + rest).decode()
    assert "stream_timeout" in text and "1 s" in text
    if path == CHAT_PATH:
        assert '"error": {"message"' in text  # an OpenAI error chunk
    else:
        assert "event: error" in text
    assert eventually(lambda: request_lines(caplog, f"limit-{path[-6:]}"))
    [line] = request_lines(caplog, f"limit-{path[-6:]}")
    assert line["ended_by_time_limit"] is True


def test_a_stream_whose_client_does_not_read_is_cut_after_its_time_limit(hashing_engine,
                                                                         caplog):
    from citadel.server.stream_limits import CUT_GRACE

    caplog.set_level(logging.INFO, logger="citadel.http")
    # 1 MB deltas fill the socket buffers of a client that never reads: the final event
    # cannot be written, so the response itself is cut.
    engine = endless_streams(hashing_engine, pause=0.0, http_stream_max_seconds=0.5)
    engine.text = "x" * 1_000_000
    app = create_app(engine)
    with guarded_server(app) as port:
        _, s = open_stream(port, "/v1/answer/stream", "127.0.0.2", {"X-Request-ID": "unread"})
        with s:
            assert eventually(lambda: request_lines(caplog, "unread"), within=CUT_GRACE + 20)
        assert eventually(lambda: app.state.stream_counts.open == 0)  # its lease given back
    [line] = request_lines(caplog, "unread")
    assert line.get("cut_after_time_limit") is True and "ended_by_time_limit" not in line
