"""`/docs`: Swagger UI served from local files, so the API docs work without internet.

The assets come from the `swagger-ui-py` package (Swagger UI 5, which reads OpenAPI 3.1);
without it FastAPI's default page (assets from a CDN) is used.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

from citadel.server.security_headers import csp_for_html

ASSETS_URL = "/static/docs"


def swagger_assets() -> Path | None:
    spec = importlib.util.find_spec("swagger_ui")
    if spec is None or spec.origin is None:
        return None
    static = Path(spec.origin).parent / "static"
    return static if (static / "swagger-ui-bundle.js").is_file() else None


def install_docs(app: FastAPI) -> None:
    assets = swagger_assets()

    if assets is None:
        def page() -> HTMLResponse:
            return get_swagger_ui_html(openapi_url="/openapi.json", title=f"{app.title} API")
        cdn: tuple[str, ...] = ("https://cdn.jsdelivr.net", "https://fastapi.tiangolo.com")
    else:
        app.mount(ASSETS_URL, StaticFiles(directory=assets), name="docs-assets")

        def page() -> HTMLResponse:
            return get_swagger_ui_html(
                openapi_url="/openapi.json", title=f"{app.title} API",
                swagger_js_url=f"{ASSETS_URL}/swagger-ui-bundle.js",
                swagger_css_url=f"{ASSETS_URL}/swagger-ui.css",
                swagger_favicon_url="/static/favicon.svg",
            )
        cdn = ()

    def docs() -> HTMLResponse:
        # Swagger UI starts from one inline script: allow exactly that one, by its hash.
        response = page()
        response.headers["Content-Security-Policy"] = csp_for_html(bytes(response.body).decode(),
                                                                   cdn)
        return response

    app.add_api_route("/docs", docs, methods=["GET"], include_in_schema=False)
