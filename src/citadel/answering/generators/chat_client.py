"""A small client for the OpenAI chat-completions protocol (hosted APIs, vLLM, the llama.cpp
server, Ollama): one POST per reply, streamed as Server-Sent Events or not.

Failures are bounded: a timeout, a connection error, HTTP 429 or 5xx is retried at most
`max_retries` times with exponential backoff (a server's `Retry-After` is honoured up to
`max_wait`; a longer one gives up at once rather than hammering). Anything else raises
`ChatError`, whose message is safe to show and log: it never contains the API key, the
URL's user info or the server's response body.
"""

from __future__ import annotations

import email.utils
import json
import logging
import random
import ssl
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import certifi
import httpx

log = logging.getLogger("citadel.llm")

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
Message = dict[str, str]


class ChatError(RuntimeError):
    """The model server gave no usable reply. The message holds no secret."""


class FormatRejected(ChatError):
    """The server refused the requested `response_format` (HTTP 400/422 naming it)."""


@dataclass(frozen=True)
class ChatConfig:
    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    timeout: float = 60.0
    max_retries: int = 2
    backoff: float = 0.5
    max_wait: float = 20.0
    temperature: float = 0.0
    max_tokens: int = 512

    def __repr__(self) -> str:  # the base URL may carry credentials: show the safe form
        return f"ChatConfig(endpoint={self.safe_endpoint!r}, model={self.model!r})"

    @property
    def endpoint(self) -> str:
        parts = urlsplit(self.base_url)
        path = parts.path.rstrip("/") + "/chat/completions"
        return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))

    @property
    def safe_endpoint(self) -> str:
        """The endpoint without user info or query, for messages and logs."""
        parts = urlsplit(self.endpoint)
        host = parts.hostname or ""
        netloc = f"{host}:{parts.port}" if parts.port else host
        return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


class ChatClient:
    """Stateless between calls: each call opens (and closes) its own connection pool."""

    def __init__(self, config: ChatConfig) -> None:
        self.config = config
        # Built once: loading the CA bundle is the slow part of opening a client.
        self._tls = ssl.create_default_context(cafile=certifi.where())

    def __repr__(self) -> str:
        return f"ChatClient({self.config.safe_endpoint!r}, model={self.config.model!r})"

    def complete(
        self, messages: Sequence[Message], response_format: dict[str, Any] | None = None
    ) -> str:
        """The text of the first choice of a non-streamed reply."""
        body = self._body(messages, response_format, stream=False)
        with self._client() as client:
            for attempt in self._attempts():
                try:
                    response = client.post(self.config.endpoint, json=body)
                except httpx.TransportError as exc:
                    attempt.failed(_describe(exc))
                    continue
                except httpx.HTTPError as exc:  # not transient; its text may hold the URL
                    raise ChatError(f"request to {self.config.safe_endpoint} failed: "
                                    f"{type(exc).__name__}") from None
                if self._retryable(response, attempt):
                    continue
                return _content_of(response, self.config.safe_endpoint)
        raise AssertionError("unreachable: _attempts raises when exhausted")

    def stream(
        self, messages: Sequence[Message], response_format: dict[str, Any] | None = None
    ) -> Iterator[str]:
        """Text deltas of a streamed reply. Retries only before the first delta arrived."""
        body = self._body(messages, response_format, stream=True)
        with self._client() as client:
            for attempt in self._attempts():
                started = False
                try:
                    with client.stream("POST", self.config.endpoint, json=body) as response:
                        if self._retryable(response, attempt, read_body=True):
                            continue
                        ctype = response.headers.get("content-type", "")
                        if ctype.startswith("application/json"):  # the server did not stream
                            response.read()
                            yield _content_of(response, self.config.safe_endpoint)
                            return
                        for delta in _sse_deltas(response, self.config.safe_endpoint):
                            started = True
                            yield delta
                        return
                except httpx.TransportError as exc:
                    if started:
                        raise ChatError(
                            f"model stream from {self.config.safe_endpoint} broke: "
                            f"{_describe(exc)}"
                        ) from None
                    attempt.failed(_describe(exc))
                except httpx.HTTPError as exc:
                    raise ChatError(f"stream from {self.config.safe_endpoint} failed: "
                                    f"{type(exc).__name__}") from None

    # -- internals ---------------------------------------------------------------------

    def _client(self) -> httpx.Client:
        headers = {"Accept": "application/json"}
        if self.config.api_key:
            headers["Authorization"] = f"Bearer {self.config.api_key}"
        return httpx.Client(timeout=httpx.Timeout(self.config.timeout), headers=headers,
                            verify=self._tls)

    def _body(
        self, messages: Sequence[Message], response_format: dict[str, Any] | None, stream: bool
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.config.model,
            "messages": list(messages),
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_tokens,
            "stream": stream,
        }
        if response_format is not None:
            body["response_format"] = response_format
        return body

    def _attempts(self) -> Iterator[_Attempt]:
        total = self.config.max_retries + 1
        attempt = _Attempt(self.config, total)
        for n in range(total):
            attempt.number, attempt.pending, attempt.wait = n + 1, True, 0.0
            yield attempt
            if attempt.pending:  # the caller returned or raised: nothing more to try
                return
            attempt.wait_before_next()
        raise ChatError(
            f"model server at {self.config.safe_endpoint} failed {total} time(s); "
            f"last error: {attempt.last_error}"
        )

    def _retryable(
        self, response: httpx.Response, attempt: _Attempt, read_body: bool = False
    ) -> bool:
        """True if the caller should try again; raises for a final failure."""
        status = response.status_code
        if status < 400:
            return False
        if read_body:
            response.read()
        # A refused response format is not transient: say so, so the caller asks for a
        # simpler one. llama-cpp-python's server answers it with a 500, others with 400/422.
        if status in (400, 422, 500) and _names_response_format(response):
            raise FormatRejected(
                f"model server at {self.config.safe_endpoint} rejected the response format "
                f"(HTTP {status})"
            )
        if status in RETRY_STATUS or status >= 500:
            attempt.failed(f"HTTP {status}", retry_after=_retry_after(response))
            return True
        hint = " (check the API key)" if status in (401, 403) else ""
        raise ChatError(f"model server at {self.config.safe_endpoint} returned HTTP {status}"
                        f"{hint}")


@dataclass
class _Attempt:
    """Bookkeeping for one try; `failed` marks it for a retry and sets the wait."""

    config: ChatConfig
    total: int
    number: int = 0
    pending: bool = True
    last_error: str = ""
    wait: float = 0.0

    def failed(self, error: str, retry_after: float | None = None) -> None:
        self.pending = False
        self.last_error = error
        if self.number >= self.total:
            return
        if retry_after is not None and retry_after > self.config.max_wait:
            raise ChatError(
                f"model server at {self.config.safe_endpoint} asked to wait {retry_after:.0f}s "
                f"({error}); the limit is {self.config.max_wait:.0f}s"
            )
        if retry_after is not None:
            self.wait = retry_after
        else:  # exponential backoff with a little jitter so clients do not retry in lockstep
            base = self.config.backoff * (2 ** (self.number - 1))
            self.wait = min(self.config.max_wait, base * random.uniform(1.0, 1.25))
        log.warning("model request %d/%d to %s failed (%s); retrying in %.2fs", self.number,
                    self.total, self.config.safe_endpoint, error, self.wait)

    def wait_before_next(self) -> None:
        if self.wait > 0:
            time.sleep(self.wait)


def _describe(exc: httpx.TransportError) -> str:
    if isinstance(exc, httpx.TimeoutException):
        return f"timed out ({type(exc).__name__})"
    return f"connection error ({type(exc).__name__})"


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _names_response_format(response: httpx.Response) -> bool:
    body = response.request.content if response.request is not None else b""
    if b'"response_format"' not in body:
        return False  # we asked for none: the error is about something else
    text = response.text.lower()
    return any(k in text for k in ("response_format", "json_schema", "json_object"))


def _content_of(response: httpx.Response, where: str) -> str:
    try:
        data = response.json()
        content = data["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise ChatError(f"model server at {where} sent a reply that is not a chat "
                        "completion") from None
    if content is None:  # e.g. a refusal or a tool call: no text to ground
        return ""
    if not isinstance(content, str):
        raise ChatError(f"model server at {where} sent non-text content")
    return content


def _sse_deltas(response: httpx.Response, where: str) -> Iterator[str]:
    """Content deltas from an SSE chat-completion stream, until `data: [DONE]`."""
    data_lines: list[str] = []
    for line in response.iter_lines():
        if line.startswith("data:"):
            data_lines.append(line[5:].lstrip())
            continue
        if line or not data_lines:
            continue  # comments, event names, ids, keep-alives
        payload, data_lines = "\n".join(data_lines), []
        if payload == "[DONE]":
            return
        delta = _delta_of(payload, where)
        if delta:
            yield delta
    if data_lines and data_lines != ["[DONE]"]:
        delta = _delta_of("\n".join(data_lines), where)
        if delta:
            yield delta


def _delta_of(payload: str, where: str) -> str:
    try:
        event = json.loads(payload)
    except ValueError:
        raise ChatError(f"model stream from {where} sent an event that is not JSON") from None
    if isinstance(event, dict) and "error" in event:
        raise ChatError(f"model stream from {where} reported an error")
    try:
        choices = event["choices"]
        if not choices:
            return ""  # e.g. a final usage-only event
        content = choices[0].get("delta", {}).get("content")
    except (KeyError, TypeError, AttributeError):
        raise ChatError(f"model stream from {where} sent an event that is not a chat "
                        "completion chunk") from None
    return content if isinstance(content, str) else ""
