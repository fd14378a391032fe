"""The HTTP service (FastAPI): JSON and streaming answers, source lookup, the web page.

Needs the `server` extra: `pip install 'citadel[server]'`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastapi import FastAPI

    from citadel.config import Settings
    from citadel.engine import Engine

INSTALL_HINT = "the HTTP server needs the server extra: pip install 'citadel[server]'"


def create_app(source: Settings | Engine | None = None, *, bind_host: str | None = None
               ) -> FastAPI:
    try:
        from citadel.server.app import create_app as _create_app
    except ModuleNotFoundError as exc:  # fastapi/uvicorn are optional
        if exc.name and exc.name.split(".")[0] in {"fastapi", "starlette", "uvicorn", "mcp",
                                                   "mcp_types"}:
            raise ModuleNotFoundError(f"{INSTALL_HINT} ({exc.name} is missing)") from exc
        raise
    return _create_app(source, bind_host=bind_host)
