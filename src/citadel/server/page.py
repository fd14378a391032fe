"""The web page at `/`: plain HTML, CSS and JavaScript modules, no build step."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

STATIC = Path(__file__).parent / "static"


def install_page(app: FastAPI) -> None:
    router = APIRouter(include_in_schema=False)

    @router.get("/")
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html",
                            headers={"Cache-Control": "no-cache"})

    app.include_router(router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
