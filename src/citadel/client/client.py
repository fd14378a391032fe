"""`Client` and `AsyncClient`: Citadel's HTTP API as typed calls.

Each call is described once (`_Call`: method, path, body) and parsed once (`_result`); the two
clients differ only in how they send. A 503 (no knowledge base yet, or a server over its
limits) is retried with exponential backoff, honouring `Retry-After`; nothing else is retried,
because nothing else gets better by asking again.

A `Conversation` (`client.conversation()`) keeps a thread: each `ask` sends the questions
asked before it as `history`, so a follow-up ("And standard delivery?") is answered as the
question it asks, standing alone (`Answer.standalone`).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel, TypeAdapter

from citadel.answering.follow_up import MAX_TURNS
from citadel.answering.streaming import DoneEvent, ErrorEvent, StreamEvent
from citadel.client.errors import ConnectionFailed, StreamError, Timeout, error_for
from citadel.knowledge.verify import VerifyReport
from citadel.records import Answer, Turn
from citadel.server.models import ChunkView, SearchResults

T = TypeVar("T")
_EVENT: TypeAdapter[Any] = TypeAdapter(StreamEvent)
MAX_RETRY_AFTER = 30.0  # seconds: a server asking for longer is not waited for


@dataclass(frozen=True)
class _Call:
    method: str
    path: str
    body: Any = None
    params: dict[str, Any] | None = None


def _answer_call(path: str, question: str, top_k: int | None, category: str | None,
                 history: Sequence[Turn] | None = None) -> _Call:
    body: dict[str, Any] = {"question": question}
    if history:
        body["history"] = [t.model_dump(exclude_none=True) for t in history]
    if top_k is not None:
        body["top_k"] = top_k
    if category is not None:
        body["category"] = category
    return _Call("POST", path, body)


def _search_call(query: str, k: int | None, category: str | None) -> _Call:
    body: dict[str, Any] = {"query": query}
    if k is not None:
        body["k"] = k
    if category is not None:
        body["category"] = category
    return _Call("POST", "/v1/search", body)


def _chunk_call(chunk_id: str, window: int) -> _Call:
    return _Call("GET", f"/v1/chunks/{quote(chunk_id, safe='/')}", params={"window": window})


def _verify_call(answer: Answer | BaseModel | dict[str, Any] | str) -> _Call:
    if isinstance(answer, str):
        body = json.loads(answer)
    elif isinstance(answer, BaseModel):
        body = answer.model_dump(mode="json")
    else:
        body = answer
    return _Call("POST", "/v1/verify", body)


def _body(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def _result(response: httpx.Response, parse: Callable[[bytes], T]) -> T:
    if response.status_code >= 400:
        raise error_for(response.status_code, _body(response))
    return parse(response.content)


def _delay(response: httpx.Response, attempt: int, backoff: float) -> float:
    """Seconds before retry `attempt` (0-based): the server's Retry-After when it gives one
    (capped), else exponential backoff."""
    try:
        asked = float(response.headers.get("retry-after", ""))
    except ValueError:
        asked = -1.0
    return min(asked, MAX_RETRY_AFTER) if asked >= 0 else backoff * 2 ** attempt


class _SseReader:
    """Server-Sent Events, line by line (`event:` + one `data:` line each), as stream event
    records; an `error` event raises StreamError."""

    def __init__(self) -> None:
        self._data: list[str] = []

    def line(self, line: str) -> Any | None:
        """The event that `line` completes, if any."""
        if line.startswith("data:"):
            self._data.append(line[5:].lstrip())
        elif not line and self._data:
            return self.end()
        return None

    def end(self) -> Any | None:
        data, self._data = "\n".join(self._data), []
        return _event(data) if data else None


def _event(data: str) -> Any:
    event = _EVENT.validate_json(data)
    if isinstance(event, ErrorEvent):
        raise StreamError(event.message, code=event.code, request_id=event.request_id)
    return event


class _Settings:
    def __init__(self, base_url: str, api_key: str | None, timeout: float, retries: int,
                 backoff: float) -> None:
        if retries < 0 or backoff < 0 or timeout <= 0:
            raise ValueError("timeout must be > 0, retries and backoff >= 0")
        self.base_url = base_url.rstrip("/")
        self.retries = retries
        self.backoff = backoff
        self.timeout = timeout
        self.headers = {"Accept": "application/json"}
        if api_key:
            self.headers["Authorization"] = f"Bearer {api_key}"


def _transport_error(exc: httpx.HTTPError, base_url: str) -> Exception:
    if isinstance(exc, httpx.TimeoutException):
        return Timeout(f"{base_url} did not answer in time ({type(exc).__name__})")
    return ConnectionFailed(f"cannot reach {base_url}: {exc}")


class Client:
    """A blocking client. Use as a context manager, or call `close()`.

    `timeout`: seconds per request (a long answer from a language model can take a while);
    `retries`: how often a 503 is retried, `backoff` seconds apart, doubling."""

    def __init__(self, base_url: str = "http://127.0.0.1:8000", api_key: str | None = None, *,
                 timeout: float = 60.0, retries: int = 3, backoff: float = 0.5,
                 transport: httpx.BaseTransport | None = None) -> None:
        self._s = _Settings(base_url, api_key, timeout, retries, backoff)
        self._http = httpx.Client(base_url=self._s.base_url, headers=self._s.headers,
                                  timeout=timeout, transport=transport)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def answer(self, question: str, *, history: Sequence[Turn] | None = None,
               top_k: int | None = None, category: str | None = None) -> Answer:
        """The gated answer (`POST /v1/answer`); `history`: the conversation's earlier turns,
        oldest first (at most 8)."""
        return _result(self._send(_answer_call("/v1/answer", question, top_k, category,
                                               history)), Answer.model_validate_json)

    def conversation(self, *, top_k: int | None = None,
                     category: str | None = None) -> Conversation:
        """A thread whose questions are asked with the ones before them."""
        return Conversation(self, top_k=top_k, category=category)

    def stream(self, question: str, *, history: Sequence[Turn] | None = None,
               top_k: int | None = None, category: str | None = None
               ) -> Iterator[StreamEvent]:
        """The answer as events (`meta`, `citation`, `delta`, `done`); a citation always
        comes before text whose marker refers to it. An `error` event raises StreamError."""
        call = _answer_call("/v1/answer/stream", question, top_k, category, history)
        for attempt in range(self._s.retries + 1):
            try:
                with self._http.stream(call.method, call.path, json=call.body) as response:
                    if response.status_code == 503 and attempt < self._s.retries:
                        time.sleep(_delay(response, attempt, self._s.backoff))
                        continue
                    if response.status_code >= 400:
                        response.read()
                        raise error_for(response.status_code, _body(response))
                    reader = _SseReader()
                    for line in response.iter_lines():
                        if (event := reader.line(line)) is not None:
                            yield event
                    if (event := reader.end()) is not None:
                        yield event
                    return
            except httpx.HTTPError as exc:
                raise _transport_error(exc, self._s.base_url) from exc

    def search(self, query: str, *, k: int | None = None,
               category: str | None = None) -> SearchResults:
        """The chunks retrieval ranks highest (`POST /v1/search`), no answer."""
        return _result(self._send(_search_call(query, k, category)),
                       SearchResults.model_validate_json)

    def chunk(self, chunk_id: str, *, window: int = 400) -> ChunkView:
        """A stored chunk and `window` characters of its source around it."""
        return _result(self._send(_chunk_call(chunk_id, window)), ChunkView.model_validate_json)

    def verify(self, answer: Answer | BaseModel | dict[str, Any] | str) -> VerifyReport:
        """Re-check a saved answer (`POST /v1/verify`, as `citadel verify` does)."""
        return _result(self._send(_verify_call(answer)), VerifyReport.model_validate_json)

    def _send(self, call: _Call) -> httpx.Response:
        for attempt in range(self._s.retries + 1):
            try:
                response = self._http.request(call.method, call.path, json=call.body,
                                              params=call.params)
            except httpx.HTTPError as exc:
                raise _transport_error(exc, self._s.base_url) from exc
            if response.status_code != 503 or attempt == self._s.retries:
                return response
            time.sleep(_delay(response, attempt, self._s.backoff))
        raise AssertionError("unreachable")


class AsyncClient:
    """The same calls as `Client`, for asyncio. Use `async with`, or `await aclose()`."""

    def __init__(self, base_url: str = "http://127.0.0.1:8000", api_key: str | None = None, *,
                 timeout: float = 60.0, retries: int = 3, backoff: float = 0.5,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self._s = _Settings(base_url, api_key, timeout, retries, backoff)
        self._http = httpx.AsyncClient(base_url=self._s.base_url, headers=self._s.headers,
                                       timeout=timeout, transport=transport)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def answer(self, question: str, *, history: Sequence[Turn] | None = None,
                     top_k: int | None = None, category: str | None = None) -> Answer:
        return _result(await self._send(_answer_call("/v1/answer", question, top_k, category,
                                                     history)), Answer.model_validate_json)

    def conversation(self, *, top_k: int | None = None,
                     category: str | None = None) -> AsyncConversation:
        return AsyncConversation(self, top_k=top_k, category=category)

    async def stream(self, question: str, *, history: Sequence[Turn] | None = None,
                     top_k: int | None = None, category: str | None = None
                     ) -> AsyncIterator[StreamEvent]:
        call = _answer_call("/v1/answer/stream", question, top_k, category, history)
        for attempt in range(self._s.retries + 1):
            try:
                async with self._http.stream(call.method, call.path, json=call.body) as response:
                    if response.status_code == 503 and attempt < self._s.retries:
                        await asyncio.sleep(_delay(response, attempt, self._s.backoff))
                        continue
                    if response.status_code >= 400:
                        await response.aread()
                        raise error_for(response.status_code, _body(response))
                    reader = _SseReader()
                    async for line in response.aiter_lines():
                        if (event := reader.line(line)) is not None:
                            yield event
                    if (event := reader.end()) is not None:
                        yield event
                    return
            except httpx.HTTPError as exc:
                raise _transport_error(exc, self._s.base_url) from exc

    async def search(self, query: str, *, k: int | None = None,
                     category: str | None = None) -> SearchResults:
        return _result(await self._send(_search_call(query, k, category)),
                       SearchResults.model_validate_json)

    async def chunk(self, chunk_id: str, *, window: int = 400) -> ChunkView:
        return _result(await self._send(_chunk_call(chunk_id, window)),
                       ChunkView.model_validate_json)

    async def verify(self, answer: Answer | BaseModel | dict[str, Any] | str) -> VerifyReport:
        return _result(await self._send(_verify_call(answer)), VerifyReport.model_validate_json)

    async def _send(self, call: _Call) -> httpx.Response:
        for attempt in range(self._s.retries + 1):
            try:
                response = await self._http.request(call.method, call.path, json=call.body,
                                                    params=call.params)
            except httpx.HTTPError as exc:
                raise _transport_error(exc, self._s.base_url) from exc
            if response.status_code != 503 or attempt == self._s.retries:
                return response
            await asyncio.sleep(_delay(response, attempt, self._s.backoff))
        raise AssertionError("unreachable")


class _Thread:
    """A conversation's turns so far; the most recent MAX_TURNS are sent with a question
    (only the questions: the server never reads an answer's text)."""

    def __init__(self, top_k: int | None, category: str | None) -> None:
        self.top_k = top_k
        self.category = category
        self.turns: list[Turn] = []

    def history(self) -> list[Turn]:
        return [Turn(question=t.question) for t in self.turns[-MAX_TURNS:]]

    def keep(self, question: str, answer: Answer) -> Answer:
        self.turns.append(Turn(question=question, answer=answer.answer))
        return answer

    def reset(self) -> None:
        """Start a new thread: the next question is asked on its own."""
        self.turns.clear()


class Conversation(_Thread):
    """A thread of questions: `ask` answers each with the ones before it, so a follow-up
    ("And standard delivery?", "How long does that take?") is answered as the question it
    asks (`Answer.standalone`). Citations are still this question's own."""

    def __init__(self, client: Client, *, top_k: int | None = None,
                 category: str | None = None) -> None:
        super().__init__(top_k, category)
        self.client = client

    def ask(self, question: str) -> Answer:
        return self.keep(question, self.client.answer(
            question, history=self.history(), top_k=self.top_k, category=self.category))

    def stream(self, question: str) -> Iterator[StreamEvent]:
        """`ask` as events; the turn is kept once its `done` event arrived."""
        for event in self.client.stream(question, history=self.history(), top_k=self.top_k,
                                        category=self.category):
            if isinstance(event, DoneEvent):
                self.keep(question, event.answer)
            yield event


class AsyncConversation(_Thread):
    """`Conversation` for `AsyncClient`."""

    def __init__(self, client: AsyncClient, *, top_k: int | None = None,
                 category: str | None = None) -> None:
        super().__init__(top_k, category)
        self.client = client

    async def ask(self, question: str) -> Answer:
        return self.keep(question, await self.client.answer(
            question, history=self.history(), top_k=self.top_k, category=self.category))

    async def stream(self, question: str) -> AsyncIterator[StreamEvent]:
        async for event in self.client.stream(question, history=self.history(),
                                              top_k=self.top_k, category=self.category):
            if isinstance(event, DoneEvent):
                self.keep(question, event.answer)
            yield event
