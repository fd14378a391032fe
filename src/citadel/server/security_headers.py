"""Browser hardening headers on every response.

The page at `/` is plain files from `/static` with no inline script or style, so its policy
allows only this origin. `/docs` (Swagger UI) starts itself with one inline script: its route
sends a policy allowing exactly that script by hash (`csp_for_html`), which this middleware
keeps. `frame-ancestors 'none'` and `X-Frame-Options: DENY` stop click-jacking in a frame;
`nosniff` stops a browser from running a JSON or text answer as script.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

PAGE_POLICY = {
    "default-src": ["'none'"],
    "script-src": ["'self'"],
    "style-src": ["'self'"],
    "img-src": ["'self'", "data:"],
    "font-src": ["'self'"],
    "connect-src": ["'self'"],
    "base-uri": ["'none'"],
    "form-action": ["'self'"],
    "frame-ancestors": ["'none'"],
}

_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.S)


def policy_text(policy: dict[str, list[str]]) -> str:
    return "; ".join(f"{name} {' '.join(sources)}" for name, sources in policy.items())


def csp_for_html(html: str, extra_sources: Iterable[str] = ()) -> str:
    """The page policy, plus each inline script of `html` by its hash (and `extra_sources`
    for scripts, styles and images, e.g. a CDN)."""
    hashes = [
        "'sha256-" + base64.b64encode(hashlib.sha256(body.encode()).digest()).decode() + "'"
        for body in _INLINE_SCRIPT.findall(html)
    ]
    extra = list(extra_sources)
    policy = {name: list(sources) for name, sources in PAGE_POLICY.items()}
    policy["script-src"] += hashes + extra
    policy["style-src"] += extra
    policy["img-src"] += extra
    return policy_text(policy)


DEFAULT_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", policy_text(PAGE_POLICY).encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
)


class SecurityHeadersMiddleware:
    """Adds `DEFAULT_HEADERS` to each response that does not set them itself."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {key.lower() for key, _ in headers}
                headers += [(k, v) for k, v in DEFAULT_HEADERS if k not in present]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)
