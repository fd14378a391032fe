"""Who is calling: API keys (sent as `Authorization: Bearer <key>` or `X-API-Key`) mapped to a
customer in the business database, or `--customer ID` for local CLI use.

Keys are random 256-bit tokens, so the database stores only their SHA-256 (a slow password
hash buys nothing for high-entropy secrets) and a leaked table does not leak usable keys.
"""

from __future__ import annotations

import hashlib
import re
import secrets

from citadel.agent import business
from citadel.agent.db import BusinessDB
from citadel.agent.records import CUSTOMER_ID_PATTERN, Caller

KEY_PREFIX = "cit_"
_KEY_SHAPE = re.compile(r"^[A-Za-z0-9_-]{16,128}$")


class AuthError(ValueError):
    """No credentials, or credentials that map to no customer."""


def generate_api_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


def hash_api_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def credentials_from_headers(authorization: str | None, x_api_key: str | None) -> str | None:
    """The key from `Authorization: Bearer <key>` or `X-API-Key: <key>`; None when absent."""
    if authorization:
        scheme, _, token = authorization.strip().partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            return token.strip()
        return None
    if x_api_key and x_api_key.strip():
        return x_api_key.strip()
    return None


def authenticate_key(db: BusinessDB, key: str | None) -> Caller:
    """The customer a key belongs to. Raises AuthError (and BusinessUnavailable on outage)."""
    if not key or not _KEY_SHAPE.match(key):
        raise AuthError("missing or invalid API key")
    with db.transaction() as tx:
        row = business.customer_by_key_hash(tx, hash_api_key(key))
    if row is None:
        raise AuthError("missing or invalid API key")
    return Caller(customer_id=row["customer_id"], name=row["name"],
                  actor=f"api_key:{row['key_id']}", tenant=row["tenant"] or None)


def local_customer(db: BusinessDB, customer_id: str) -> Caller:
    """`--customer ID` on the CLI: trusted local use, but the customer must exist."""
    if not re.match(CUSTOMER_ID_PATTERN, customer_id or ""):
        raise AuthError(f"not a customer id: {customer_id!r}")
    with db.transaction() as tx:
        row = business.customer_by_id(tx, customer_id)
    if row is None:
        raise AuthError(f"no customer {customer_id!r} in the business database "
                        "(run `citadel demo-data` to create the demo customers)")
    return Caller(customer_id=row["id"], name=row["name"], actor="cli",
                  tenant=row["tenant"] or None)
