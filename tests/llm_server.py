"""A small OpenAI-compatible chat-completions server for tests: real HTTP on 127.0.0.1,
real Server-Sent Events for `stream: true`, replaying scripted model behaviours.

Each test registers a script under a model name of its own; requests naming that model get
its steps in order (the last step repeats). A reply may be a function of the request, so a
scripted "model" can read the context blocks it was handed and cite the right label.

    with ScriptedLLM() as llm:
        llm.script("m-correct", Reply(lambda req: answer_json(...)))
        ... generator with llm_base_url=llm.base_url, llm_model="m-correct" ...
        llm.requests["m-correct"]   # what the client sent (body and headers)
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Seen:
    """One request as the server received it."""

    body: dict[str, Any]
    headers: dict[str, str]

    @property
    def system(self) -> str:
        return next((m["content"] for m in self.body["messages"] if m["role"] == "system"), "")

    @property
    def user(self) -> str:
        return next((m["content"] for m in self.body["messages"] if m["role"] == "user"), "")

    @property
    def blocks(self) -> dict[str, str]:
        """Label -> block text, as the prompt presented them."""
        parts = re.split(r"^\[(S\d+)\] ", self.user, flags=re.M)
        return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}

    def label_of(self, text: str) -> str:
        """The label of the block containing `text` (the scripted model 'reads' its input)."""
        for label, block in self.blocks.items():
            if text in block:
                return label
        raise AssertionError(f"no block contains {text!r}; blocks: {list(self.blocks)}")


Content = str | Callable[[Seen], str]


@dataclass
class Reply:
    """A 200 reply with this content; streamed in `chunks` (or pieces of `chunk_size`)."""

    content: Content
    chunks: Sequence[str] | Callable[[str], Sequence[str]] | None = None
    chunk_size: int = 3
    # Streaming only: after this many chunks, wait until `release` is set (lets a test look
    # at what the client made of a half-sent stream, without timing assumptions).
    hold_after: int | None = None
    release: threading.Event | None = None


@dataclass
class Fail:
    status: int
    retry_after: str | None = None
    body: str = '{"error": {"message": "scripted failure", "type": "server_error"}}'


@dataclass
class Hang:
    """Accept the request and send nothing for `seconds` (then a reply, if anyone listens)."""

    seconds: float
    then: Reply | None = None


@dataclass
class Script:
    steps: list[Reply | Fail | Hang]
    formats: tuple[str, ...] = ("json_schema", "json_object")  # response formats accepted
    format_error: int = 400  # status of a refused format (llama-cpp-python's server: 500)
    served: int = 0


@dataclass
class ScriptedLLM:
    scripts: dict[str, Script] = field(default_factory=dict)
    requests: dict[str, list[Seen]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)
    server: ThreadingHTTPServer | None = None

    def script(
        self, model: str, *steps: Reply | Fail | Hang,
        formats: tuple[str, ...] = ("json_schema", "json_object"), format_error: int = 400,
    ) -> str:
        with self.lock:
            self.scripts[model] = Script(list(steps), formats, format_error)
            self.requests[model] = []
        return model

    @property
    def base_url(self) -> str:
        assert self.server is not None
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> ScriptedLLM:
        owner = self

        class Handler(_Handler):
            llm = owner

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def __enter__(self) -> ScriptedLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def next_step(self, seen: Seen) -> Reply | Fail | Hang | None:
        model = seen.body.get("model", "")
        with self.lock:
            script = self.scripts.get(model)
            if script is None:
                return None
            requested = seen.body.get("response_format") or {}
            fmt = requested.get("type")
            if fmt and "schema" in requested:
                fmt += "+schema"  # llama-cpp-python's extension: a schema in json_object mode
            if fmt and fmt not in script.formats:
                return Fail(script.format_error, body=json.dumps({"error": {
                    "message": f"response_format type {fmt} is not supported",
                    "type": "invalid_request_error"}}))
            self.requests[model].append(seen)
            step = script.steps[min(script.served, len(script.steps) - 1)]
            script.served += 1
            return step


class _Handler(BaseHTTPRequestHandler):
    llm: ScriptedLLM
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            return self._json(404, {"error": {"message": "not found"}})
        length = int(self.headers.get("Content-Length", "0"))
        try:
            body = json.loads(self.rfile.read(length))
        except ValueError:
            return self._json(400, {"error": {"message": "body is not JSON"}})
        seen = Seen(body=body, headers={k.lower(): v for k, v in self.headers.items()})
        step = self.llm.next_step(seen)
        if step is None:
            return self._json(404, {"error": {"message": f"no script for {body.get('model')}"}})
        # The client may give up first (a timeout test): nothing to do then.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self._play(step, seen)

    def _play(self, step: Reply | Fail | Hang, seen: Seen) -> None:
        if isinstance(step, Hang):
            deadline = time.monotonic() + step.seconds
            while time.monotonic() < deadline and not self.llm.stopping.is_set():
                time.sleep(0.02)
            if step.then is None or self.llm.stopping.is_set():
                self.close_connection = True
                return
            step = step.then
        if isinstance(step, Fail):
            headers = {"Retry-After": step.retry_after} if step.retry_after is not None else {}
            return self._raw(step.status, step.body.encode(), "application/json", headers)
        content = step.content(seen) if callable(step.content) else step.content
        if seen.body.get("stream"):
            return self._stream(content, step)
        self._json(200, {
            "id": "chatcmpl-test", "object": "chat.completion", "created": int(time.time()),
            "model": seen.body.get("model"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
        })

    def _stream(self, content: str, step: Reply) -> None:
        if callable(step.chunks):
            pieces = list(step.chunks(content))
        elif step.chunks is not None:
            pieces = list(step.chunks)
        else:
            size = step.chunk_size
            pieces = [content[i : i + size] for i in range(0, len(content), size)]
        assert "".join(pieces) == content, "stream chunks must add up to the content"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        first = {"role": "assistant", "content": ""}
        for n, delta in enumerate([first] + [{"content": p} for p in pieces]):
            if n - 1 == step.hold_after and step.release is not None:
                step.release.wait(timeout=30)
            event = {"id": "chatcmpl-test", "object": "chat.completion.chunk",
                     "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()
        done = {"id": "chatcmpl-test", "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
        self.wfile.write(f"data: {json.dumps(done)}\n\ndata: [DONE]\n\n".encode())
        self.wfile.flush()

    def _json(self, status: int, payload: dict[str, Any]) -> None:
        self._raw(status, json.dumps(payload).encode(), "application/json", {})

    def _raw(self, status: int, data: bytes, ctype: str, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()


def answer_json(answer: str, citations: Sequence[tuple[str, str]], confidence: float = 0.9) -> str:
    return json.dumps({"answer": answer,
                       "citations": [{"id": i, "quote": q} for i, q in citations],
                       "confidence": confidence})
