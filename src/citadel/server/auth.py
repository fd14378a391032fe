"""Whose documents a request may see: the tenant comes from its API key, never from the request.

Keys are configured in settings (`[api_keys]`, key → tenant) and sent like the agent's, as
`Authorization: Bearer <key>` or `X-API-Key: <key>`. Without a key a request sees public
documents only, or is refused (401) when `open_answers = false`; an unknown key is always a
401, never a silent fall back to public documents. A `tenant` in the body or query is refused
(422): it would let any caller claim any tenant.

Admin keys (`admin_keys`) are a role of their own: they list, add and remove documents
(`citadel.server.documents`, `admin_scope`) and answer nothing; an answering key there is a
403 that says an admin key is needed. A key cannot be both.

Only SHA-256 digests of the keys are kept (the config may hold just `sha256:<hex>`), and a
presented key's digest is compared with every one of them by `hmac.compare_digest`, so the
time a lookup takes does not depend on which key, or how much of one, matched. Keys are
never logged; the request log records the tenant a key mapped to.
"""

# No `from __future__ import annotations`: FastAPI must see the dependency objects in the
# signature of `tenant_scope`.
import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import HTTPException, Request, Security
from fastapi.security import APIKeyHeader, HTTPBearer
from pydantic import SecretStr

from citadel.config import ConfigError, Settings
from citadel.server.models import ErrorBody

# Declared so the OpenAPI schema (and /docs' "Authorize") shows how to authenticate; the
# headers themselves are read by `presented_key`.
BEARER = HTTPBearer(auto_error=False, description="`Authorization: Bearer <API key>`")
API_KEY = APIKeyHeader(name="X-API-Key", auto_error=False,
                       description="`X-API-Key: <API key>` (instead of the bearer token)")

HOW_TO_AUTHENTICATE = "send an API key as `Authorization: Bearer <key>` or `X-API-Key: <key>`"
TENANT_NOT_ACCEPTED = ("`tenant` is not accepted in a request: the tenant comes from your API "
                       f"key; {HOW_TO_AUTHENTICATE} and leave `tenant` out")
_SCOPED_MARK = "x-citadel-tenant-scoped"
# `openapi_extra` of every operation that depends on `tenant_scope` (document_optional_key).
TENANT_SCOPED: dict[str, Any] = {_SCOPED_MARK: True}
AUTH_RESPONSES: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "Invalid API key, or a key is required "
                                             "(`open_answers = false`)."},
}
ADMIN_KEY_NEEDED = ("managing documents needs an admin key (`admin_keys` in the settings), "
                    "sent as `Authorization: Bearer <key>` or `X-API-Key: <key>`")
ADMIN_RESPONSES: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "No key, or a key that is not configured."},
    403: {"model": ErrorBody, "description": "An answering key: an admin key is needed."},
}


class TenantInRequest(ValueError):
    """A request named its own tenant (body or query): refused, see TENANT_NOT_ACCEPTED."""


class Unauthorized(ValueError):
    """No usable key where one is needed, or a key that is not configured."""


class AdminKeyRequired(PermissionError):
    """An answering key where an admin key is needed (a 403, `admin_key_required`)."""


@dataclass(frozen=True)
class TenantScope:
    """What one request may see: `tenant`'s documents and public ones (None: public only)."""

    tenant: str | None
    authenticated: bool


def digest(key: str) -> bytes:
    """The SHA-256 a configured key is compared by; `sha256:<hex>` is that digest given."""
    if key.startswith("sha256:"):
        return bytes.fromhex(key.removeprefix("sha256:"))
    return hashlib.sha256(key.encode()).digest()


class ApiKeys:
    """The configured keys (as digests) and the open-mode setting of one app."""

    def __init__(self, keys: Mapping[SecretStr, str], *, open_answers: bool,
                 admin_keys: tuple[SecretStr, ...] = ()) -> None:
        tenants: dict[bytes, str | None] = {}
        for n, (key, tenant) in enumerate(keys.items(), start=1):
            d = digest(key.get_secret_value())
            if tenants.setdefault(d, tenant or None) != (tenant or None):
                # The same key given twice (as itself and as its digest) for two tenants.
                raise ConfigError(f"api_keys: key #{n} is configured twice, for two tenants")
        admins = {digest(key.get_secret_value()) for key in admin_keys}
        for n, key in enumerate(admin_keys, start=1):
            if digest(key.get_secret_value()) in tenants:
                raise ConfigError(f"admin_keys: key #{n} is also an answering key in api_keys; "
                                  "an admin key must be a key of its own")
        self._keys = tuple(tenants.items())
        self._admins = tuple(admins)
        self.open_answers = open_answers

    @classmethod
    def from_settings(cls, settings: Settings) -> "ApiKeys":
        return cls(settings.api_keys, open_answers=settings.open_answers,
                   admin_keys=settings.admin_keys)

    def is_admin(self, key: str | None) -> bool:
        """Whether `key` is an admin key (every admin key compared, as in `scope`)."""
        if key is None:
            return False
        presented = hashlib.sha256(key.encode()).digest()
        return sum(hmac.compare_digest(presented, stored) for stored in self._admins) > 0

    def is_answering(self, key: str) -> bool:
        presented = hashlib.sha256(key.encode()).digest()
        return sum(hmac.compare_digest(presented, stored) for stored, _ in self._keys) > 0

    def scope(self, key: str | None) -> TenantScope:
        """The scope of a request that presented `key` (None: no key). Raises Unauthorized."""
        if key is None:
            if not self.open_answers:
                raise Unauthorized(f"this server answers only with an API key: "
                                   f"{HOW_TO_AUTHENTICATE}")
            return TenantScope(tenant=None, authenticated=False)
        presented = hashlib.sha256(key.encode()).digest()
        found: list[str | None] = []
        for stored, tenant in self._keys:  # every key compared: the time does not say which
            if hmac.compare_digest(presented, stored):
                found.append(tenant)
        if not found:
            raise Unauthorized(f"unknown API key: {HOW_TO_AUTHENTICATE}, with a key the "
                               "operator configured in [api_keys]")
        return TenantScope(tenant=found[0], authenticated=True)  # digests are unique


def presented_key(authorization: str | None, x_api_key: str | None) -> str | None:
    """The key a request sends: a bearer token, else `X-API-Key`; None when there is none.

    An `Authorization` header of another scheme (say `Basic`, from a proxy guarding the
    page) is not ours and is ignored, so it neither breaks open mode nor grants anything.
    """
    if authorization:
        scheme, _, token = authorization.strip().partition(" ")
        if scheme.lower() == "bearer":
            return token.strip() or ""  # "" is a key that matches nothing: a 401
    if x_api_key is not None:
        return x_api_key.strip()
    return None


async def tenant_scope(
    request: Request,
    _bearer: Annotated[object, Security(BEARER)],
    _api_key: Annotated[object, Security(API_KEY)],
) -> TenantScope:
    """FastAPI dependency: the request's `TenantScope`, from its key (401 / 422: see above).
    `async` because it never blocks (a few digests): FastAPI runs a plain `def` dependency in
    a worker thread, a hop per request that cost more than the work."""
    if "tenant" in request.query_params:
        raise TenantInRequest(TENANT_NOT_ACCEPTED)
    keys: ApiKeys = request.app.state.api_keys
    try:
        scope = keys.scope(presented_key(request.headers.get("authorization"),
                                         request.headers.get("x-api-key")))
    except Unauthorized as exc:
        raise HTTPException(401, str(exc), headers={"WWW-Authenticate": "Bearer"}) from None
    log = getattr(request.state, "log", None)
    if log is not None:
        log.update(tenant=scope.tenant, authenticated=scope.authenticated)
    return scope


async def admin_scope(
    request: Request,
    _bearer: Annotated[object, Security(BEARER)],
    _api_key: Annotated[object, Security(API_KEY)],
) -> None:
    """FastAPI dependency of the document-management routes: passes an admin key only. No
    key or an unknown one is a 401; an answering key a 403 that says an admin key is needed."""
    keys: ApiKeys = request.app.state.api_keys
    key = presented_key(request.headers.get("authorization"), request.headers.get("x-api-key"))
    if keys.is_admin(key):
        log = getattr(request.state, "log", None)
        if log is not None:
            log.update(authenticated=True)
        return
    if key is not None and keys.is_answering(key):
        raise AdminKeyRequired(f"this key answers questions only: {ADMIN_KEY_NEEDED}")
    raise HTTPException(401, ADMIN_KEY_NEEDED if key is None else
                        f"unknown API key: {ADMIN_KEY_NEEDED}",
                        headers={"WWW-Authenticate": "Bearer"})


def document_optional_key(openapi: dict[str, Any], *, open_answers: bool) -> dict[str, Any]:
    """Finish the security of the operations marked `TENANT_SCOPED`: in open mode a key is
    optional there, which OpenAPI says with an empty requirement (`{}`), so clients and
    fuzzers do not take a keyless 200 for ignored authentication. The marker is removed."""
    for operations in openapi.get("paths", {}).values():
        for operation in operations.values():
            if isinstance(operation, dict) and operation.pop(_SCOPED_MARK, False):
                security = operation.setdefault("security", [])
                if open_answers and {} not in security:
                    security.insert(0, {})
    return openapi
