"""The application factory: `create_app(settings | engine)`.

Routers are added with one `include_router` line each; everything per-app (engine, open
streams) lives on `app.state`, everything per-request on `request.state`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from fastapi import FastAPI
from starlette.routing import Route

from citadel.config import Settings
from citadel.engine import Engine, NotReady
from citadel.server.agent import AgentProvider
from citadel.server.agent_routes import agent_router
from citadel.server.auth import ApiKeys, document_optional_key
from citadel.server.body_limit import BodyLimitMiddleware
from citadel.server.chat import chat_router
from citadel.server.docs import install_docs
from citadel.server.documents import documents_router, upload_limit
from citadel.server.drain import DRAIN_STATE, Drain
from citadel.server.errors import install_error_handlers
from citadel.server.hosts import AllowedHosts, HostCheckMiddleware
from citadel.server.mcp_door import HttpDoor
from citadel.server.models import answer_request_model
from citadel.server.operations import Operations
from citadel.server.page import install_page
from citadel.server.provider import EngineProvider
from citadel.server.readiness import DocumentCounts
from citadel.server.request_log import RequestLogMiddleware
from citadel.server.routes import api_router
from citadel.server.security_headers import SecurityHeadersMiddleware
from citadel.server.sse import StreamRegistry, document_stream_events, stream_router
from citadel.server.stream_limits import StreamCounts, StreamLimits
from citadel.text.analysis import AnalyserUnavailable

log = logging.getLogger("citadel.http")

DESCRIPTION = (
    "Grounded answers whose citations cannot be forged: every citation names a chunk that was "
    "retrieved for the request, its real source, the quote's offsets in that source, the "
    "snapshot and the chunk's content hash."
)


def _version() -> str:
    try:
        return version("citadel")
    except PackageNotFoundError:
        return "0"


def _load_analyser(engine: Engine) -> None:
    try:
        engine.judge.analyser.load()
    except AnalyserUnavailable as exc:  # answers will say so; the server still serves
        log.warning("question analysis is unavailable: %s", exc)


def create_app(source: Settings | Engine | None = None, *, bind_host: str | None = None
               ) -> FastAPI:
    """An app serving an open `Engine`, or the active snapshot of `Settings` (opened lazily).

    `bind_host` (what `citadel serve --host` listens on) is an accepted Host header name."""
    if isinstance(source, Engine):
        provider = EngineProvider(source.settings, engine=source)
    else:
        provider = EngineProvider(source or Settings.load())
    agents = AgentProvider(provider.settings, provider)
    drain = Drain()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[dict[str, Any]]:
        try:
            # Load the embedding model now (it loads lazily), not on the first request.
            engine = provider.get()
            engine.embedder.embed_query("warm up")
            # The question analyser (spaCy, seconds on a busy machine) loads beside the
            # server, so /healthz answers at once and the first answer waits less, if at all.
            threading.Thread(target=_load_analyser, args=(engine,), daemon=True,
                             name="citadel-warm-up").start()
        except NotReady as exc:
            log.warning("starting without a servable knowledge base: %s", exc)
        async with mcp.running():
            # The server finds the drain here when it stops (citadel.server.drain).
            yield {DRAIN_STATE: drain}
            drain.closing()
        agents.close()
        provider.close()

    app = FastAPI(title="Citadel", version=_version(), description=DESCRIPTION,
                  lifespan=lifespan, docs_url=None, redoc_url=None)
    app.state.provider = provider
    app.state.agents = agents
    app.state.api_keys = ApiKeys.from_settings(provider.settings)
    app.state.operations = Operations(provider)
    mcp = HttpDoor(app.state.operations, app.state.api_keys)
    app.state.streams = StreamRegistry()
    app.state.stream_counts = StreamCounts(StreamLimits.from_settings(provider.settings))
    app.state.document_counts = DocumentCounts()
    app.state.drain = drain
    install_error_handlers(app)
    # Added last = outermost: the request log sees (and ids) every request, even a refused one.
    app.add_middleware(BodyLimitMiddleware,
                       max_bytes=max(64_000, 8 * provider.settings.max_question_chars),
                       larger=upload_limit(app.state.api_keys, provider.settings.max_file_bytes))
    app.add_middleware(HostCheckMiddleware,
                       allowed=AllowedHosts(provider.settings.http_allowed_hosts, bind_host))
    app.add_middleware(SecurityHeadersMiddleware)  # outside the host check: its 400 gets them
    app.add_middleware(RequestLogMiddleware)

    request_model = answer_request_model(provider.settings.max_question_chars)
    app.include_router(documents_router())  # before api_router: DELETE beside its GET by id
    app.include_router(api_router(request_model))
    app.include_router(stream_router(request_model))
    app.include_router(agent_router(agents.get))
    app.include_router(chat_router())
    # MCP over streamable HTTP (citadel.server.mcp_door): the SDK's transport, behind our key.
    app.router.routes.append(Route("/mcp", endpoint=mcp, methods=["GET", "POST", "DELETE"],
                                   include_in_schema=False))
    install_docs(app)
    install_page(app)

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = document_stream_events(FastAPI.openapi(app))
            document_optional_key(app.openapi_schema,
                                  open_answers=app.state.api_keys.open_answers)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app
