"""A small /rerank server for tests, on 127.0.0.1, speaking both wire protocols.

It answers by the words it finds in the query, so one server can serve healthy and faulty
requests at the same time:

  GARBAGE   a 200 response that is not a valid ranking
  NOTJSON   a 200 response that is not JSON
  ERROR500  HTTP 500
  DROP      closes the connection without answering
  HANG      waits until the server is stopped (or 30 s), i.e. past any client budget
  otherwise a real ranking: score = share of the query's words found in the text

A body with "texts" gets the text-embeddings-inference answer ([{index, score}]); one with
"documents" gets the Cohere/Jina answer ({results: [{index, relevance_score}]}).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_WORD = re.compile(r"\w+")


def overlap_scores(query: str, texts: list[str]) -> list[float]:
    q = {w.lower() for w in _WORD.findall(query)}
    out = []
    for text in texts:
        words = {w.lower() for w in _WORD.findall(text)}
        out.append(len(q & words) / (len(q) or 1))
    return out


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512  # many concurrent clients connect at once
    release: threading.Event
    requests: list[dict]
    lock: threading.Lock

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # clients that gave up (timeouts) are expected here


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - quiet
        pass

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        length = int(self.headers.get("Content-Length", 0))
        body = json.loads(self.rfile.read(length))
        with self.server.lock:
            self.server.requests.append({"path": self.path, "body": body})
        query = body.get("query", "")
        if "HANG" in query:
            self.server.release.wait(30)
            self.close_connection = True  # the client gave up long ago
            return
        if "DROP" in query:
            self.close_connection = True
            self.connection.close()
            return
        if "ERROR500" in query:
            self._send(500, b'{"error": "model crashed"}')
            return
        if "NOTJSON" in query:
            self._send(200, b"<html>oops</html>")
            return
        cohere = "documents" in body
        texts = body["documents"] if cohere else body["texts"]
        scores = overlap_scores(query, texts)
        if "GARBAGE" in query:
            payload: object = ({"results": [{"index": 99, "relevance_score": "high"}]}
                               if cohere else [{"index": 0, "score": None}])
        elif cohere:
            order = sorted(range(len(texts)), key=lambda i: -scores[i])[: body.get("top_n")]
            payload = {"results": [{"index": i, "relevance_score": scores[i]} for i in order]}
        else:
            order = sorted(range(len(texts)), key=lambda i: -scores[i])
            payload = [{"index": i, "score": scores[i]} for i in order]
        self._send(200, json.dumps(payload).encode())


@contextmanager
def rerank_server() -> Iterator[_Server]:
    """Start the server on a free loopback port; `server.url` is its /rerank endpoint."""
    server = _Server(("127.0.0.1", 0), _Handler)
    server.release = threading.Event()
    server.requests = []
    server.lock = threading.Lock()
    server.url = f"http://127.0.0.1:{server.server_address[1]}/rerank"  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.release.set()
        server.shutdown()
        server.server_close()
        thread.join(5)


def closed_port_url() -> str:
    """A loopback URL nothing listens on (the port was just freed)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/rerank"
