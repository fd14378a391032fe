"""Who may see which chunk: the one rule every backend filter and every lookup follows.

A chunk or document without a tenant is public. A request without a tenant sees public items
only; a request naming a tenant sees that tenant's items and public ones, never another
tenant's. Backends store a missing tenant as NULL or "" (and the lexical index as `_public`),
so "" means public here too.
"""

from __future__ import annotations


def request_tenant(tenant: str | None) -> str | None:
    """A request's tenant, with "" (no tenant named) meaning public only."""
    return tenant or None


def visible(tenant_of_item: str | None, tenant: str | None) -> bool:
    """Public items are visible to all; a tenant's items only to requests naming that tenant."""
    return not tenant_of_item or tenant_of_item == request_tenant(tenant)
