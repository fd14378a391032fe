"""Which document replaces which: the one rule that a request's context (per request,
`citadel.answering.context`) and a snapshot (per build, `retired_documents`) follow.

A document replaces another only by naming it in `supersedes`, and only when it is at least
as authoritative and not older (the guard that keeps a low-authority page from knocking the
current policy out by claiming to replace it). Claims that form a cycle (A supersedes B and
B supersedes A) are ignored: see `cyclic_claims`.

The functions take anything with a document's metadata: chunks (every chunk carries its
document's) or the documents themselves.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Protocol


class Claimant(Protocol):
    """A chunk or a document: what the rule reads of it."""

    @property
    def document_id(self) -> str: ...
    @property
    def authority(self) -> float: ...
    @property
    def effective_date(self) -> dt.date | None: ...
    @property
    def supersedes(self) -> str | None: ...
    @property
    def tenant(self) -> str | None: ...


def supersession_claims(items: Sequence[Claimant]) -> dict[str, list[str]]:
    """{document id: the documents among `items` that claim to supersede it and pass the
    guard (at least as authoritative, not older)}, in the order of `items`."""
    best: dict[str, tuple[float, dt.date]] = {}
    for c in items:
        a, d = best.get(c.document_id, (0.0, dt.date.min))
        best[c.document_id] = (max(a, c.authority), max(d, c.effective_date or dt.date.min))
    claims: dict[str, list[str]] = {}
    for c in items:
        old = c.supersedes
        if not old or old == c.document_id or old not in best:
            continue
        authority, date = best[c.document_id]
        old_authority, old_date = best[old]
        if authority >= old_authority and date >= old_date:
            successors = claims.setdefault(old, [])
            if c.document_id not in successors:
                successors.append(c.document_id)
    return claims


def cyclic_claims(claims: dict[str, list[str]]) -> set[tuple[str, str]]:
    """The (superseded, superseding) claims that lie on a cycle: A supersedes B, B supersedes
    A (or a longer ring). The guard lets a cycle through only among documents of equal
    authority and equal date, where nothing says which one is current, so such claims are
    ignored rather than letting the documents knock each other out. A claim old <- new is on
    a cycle when old supersedes, directly or through others, new."""
    def reaches(start: str, goal: str) -> bool:
        seen, todo = {start}, [start]
        while todo:
            for nxt in claims.get(todo.pop(), ()):
                if nxt == goal:
                    return True
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return False

    return {(old, new) for old, news in claims.items() for new in news if reaches(new, old)}


def superseding_documents(items: Sequence[Claimant]) -> dict[str, str]:
    """{superseded document id: the document among `items` that supersedes it}; claims on a
    supersession cycle (`cyclic_claims`) supersede nothing."""
    claims = supersession_claims(items)
    cyclic = cyclic_claims(claims)
    out: dict[str, str] = {}
    for old, news in claims.items():
        new = next((n for n in news if (old, n) not in cyclic), None)
        if new is not None:
            out[old] = new
    return out


def retired_documents(documents: Sequence[Claimant]) -> dict[str, str]:
    """{retired document id: its live successor} over a whole snapshot: the documents that
    are never evidence while it is served, whatever a request retrieves.

    A successor retires a document only where everyone who may see the old one also sees
    the successor: it is public, or of the old one's tenant. A tenant's own document that
    supersedes a public one replaces it for that tenant alone, which the per-request rule
    (`citadel.answering.context`) applies among the chunks that tenant retrieves."""
    tenant_of = {d.document_id: d.tenant or None for d in documents}
    claims = supersession_claims(documents)
    cyclic = cyclic_claims(claims)
    out: dict[str, str] = {}
    for old, news in claims.items():
        new = next((n for n in news if (old, n) not in cyclic
                    and tenant_of[n] in (None, tenant_of[old])), None)
        if new is not None:
            out[old] = new
    return out
