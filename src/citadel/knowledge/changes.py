"""What changed between two snapshots: the documents added, changed and removed.

A document is named by its id (which comes from its path alone, `citadel.ingest.loaders`), so
a file edited in place is the same document, `changed` when its content hash differs. Only
the text counts: a document whose operator metadata changed (authority, tenant) but not its
text is not listed, though it makes a new snapshot (the fingerprint covers metadata too).

Computed at every ingest against the snapshot that was active (`citadel ingest` prints it,
the manifest keeps it, `IngestReport.changes` carries it); pure functions of two document
lists, so a test needs no snapshot.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field


class Described(Protocol):
    """What a change is computed from: a manifest's `DocumentEntry` or a loaded `Document`."""

    @property
    def document_id(self) -> str: ...

    @property
    def source(self) -> str: ...

    @property
    def content_sha256(self) -> str: ...


class ChangedDocument(BaseModel):
    model_config = ConfigDict(frozen=True)

    document_id: str
    source: str


class Changes(BaseModel):
    """The documents of a build against those of the snapshot active before it (`since`;
    None when nothing was active: every document is then `added`)."""

    model_config = ConfigDict(frozen=True)

    since: str | None = Field(default=None, description="The snapshot compared with.")
    added: tuple[ChangedDocument, ...] = ()
    changed: tuple[ChangedDocument, ...] = ()
    removed: tuple[ChangedDocument, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.added or self.changed or self.removed)

    def summary(self, limit: int = 5) -> str:
        """`2 added (faq, returns), 1 changed (refunds-policy), 0 removed`: at most `limit`
        ids per kind, then how many more."""
        return ", ".join(f"{len(docs)} {kind}{_names(docs, limit)}" for kind, docs in (
            ("added", self.added), ("changed", self.changed), ("removed", self.removed)))


def _names(docs: tuple[ChangedDocument, ...], limit: int) -> str:
    if not docs:
        return ""
    shown = ", ".join(d.document_id for d in docs[:limit])
    more = f" and {len(docs) - limit} more" if len(docs) > limit else ""
    return f" ({shown}{more})"


def document_changes(previous: Iterable[Described] | None, current: Iterable[Described],
                     since: str | None = None) -> Changes:
    """The changes from `previous` (None: no snapshot before) to `current`, each kind sorted
    by document id."""
    before = {d.document_id: d for d in previous or ()}
    after = {d.document_id: d for d in current}

    def listed(ids: Iterable[str], docs: dict[str, Described]) -> tuple[ChangedDocument, ...]:
        return tuple(ChangedDocument(document_id=i, source=docs[i].source) for i in sorted(ids))

    return Changes(
        since=since,
        added=listed(after.keys() - before.keys(), after),
        changed=listed((i for i in after.keys() & before.keys()
                        if after[i].content_sha256 != before[i].content_sha256), after),
        removed=listed(before.keys() - after.keys(), before),
    )
