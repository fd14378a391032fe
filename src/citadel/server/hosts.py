"""Refuse requests whose Host header names a server we are not (DNS rebinding).

A web page on `evil.example` can make its name resolve to 127.0.0.1 and then read this API
from the visitor's browser as same-origin; its requests still say `Host: evil.example`.
Accepted: loopback names, the address the request arrived on, the name `citadel serve` was
told to bind, and `settings.http_allowed_hosts` (a name matches any port, `name:port` only
that port, `*` everything).
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from starlette.types import ASGIApp, Receive, Scope, Send

LOOPBACK = ("localhost", "127.0.0.1", "::1")
_WILDCARD_BINDS = {"", "0.0.0.0", "::"}


def split_host(value: str) -> tuple[str, str | None]:
    """`("example.com", "8000")` for `Example.COM.:8000`; IPv6 literals keep no brackets."""
    value = value.strip().lower()
    if value.startswith("["):
        name, _, rest = value[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else None
    elif value.count(":") == 1:
        name, port = value.split(":")
    else:
        name, port = value, None
    return name.rstrip("."), port or None


class AllowedHosts:
    def __init__(self, configured: Iterable[str], bind_host: str | None = None) -> None:
        entries = [*LOOPBACK, *configured]
        if bind_host is not None and bind_host.strip("[]") not in _WILDCARD_BINDS:
            entries.append(bind_host)
        self.any = "*" in entries
        self.names = {split_host(e)[0] for e in entries if split_host(e)[1] is None}
        self.exact = {split_host(e) for e in entries if split_host(e)[1] is not None}

    def allows(self, host: str, local_address: str | None) -> bool:
        if self.any:
            return True
        name, port = split_host(host)
        if not name:
            return False
        return name in self.names or (name, port) in self.exact or name == local_address


class HostCheckMiddleware:
    def __init__(self, app: ASGIApp, allowed: AllowedHosts) -> None:
        self.app = app
        self.allowed = allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = next((v.decode("latin-1") for k, v in scope.get("headers", [])
                     if k.lower() == b"host"), "")
        server = scope.get("server")
        local = server[0].lower() if server else None
        if self.allowed.allows(host, local):
            await self.app(scope, receive, send)
            return
        shown = host[:100] if host.isprintable() else repr(host[:100])
        payload = json.dumps({"error": {
            "code": "bad_host", "errors": [],
            "message": f"this server does not answer to Host {shown!r}: use its own address, or "
                       "add the name to CITADEL_HTTP_ALLOWED_HOSTS if it is one of this server's",
            "request_id": scope.get("state", {}).get("request_id"),
        }}).encode()
        await send({"type": "http.response.start", "status": 400,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(payload)).encode())]})
        await send({"type": "http.response.body", "body": payload})
