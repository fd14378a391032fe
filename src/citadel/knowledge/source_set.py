"""Where a snapshot's documents came from, recorded so that the next change can rebuild it.

A snapshot is immutable; adding or removing one document builds a new one from everything
the previous one was built from, plus or minus that document. Its manifest therefore records
its `SourceSet`: the files, folders and websites `citadel ingest` was given (absolute paths,
http(s) URLs), the ids of the documents of those an operator removed, and the documents
uploaded through `citadel docs add` or `POST /v1/documents`, which are kept in
`<home>/documents/` under the SHA-256 of their bytes (an uploaded file's name is never used
as a path: it is only the document's source, sanitized; `citadel.ingest.managed`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

MANAGED_FOLDER = "documents"  # under the home: the uploaded files, by content hash
# A tenant as an API key names it (config: at most 200 characters), without control characters.
TENANT_PATTERN = r"^[^\x00-\x1f\x7f]{1,200}$"


class ManagedDocument(BaseModel):
    """One uploaded document: the stored file, the name it was uploaded as, and the metadata
    the admin who uploaded it set (None: the loader's default, as for a file in a folder)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    document_id: str
    name: str = Field(description="The uploaded file's name, sanitized: the document's source.")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="Of the file's bytes.")
    suffix: str = Field(pattern=r"^\.[a-z]{2,8}$", description="Which loader reads it.")
    added_at: str
    authority: float | None = Field(default=None, ge=0.0, le=1.0)
    tenant: str | None = Field(default=None, pattern=TENANT_PATTERN)
    supersedes: str | None = Field(default=None, min_length=1, max_length=500)

    @property
    def stored_name(self) -> str:
        """The file's name in the managed folder: its hash, never anything a client chose."""
        return self.sha256 + self.suffix

    def path(self, home: Path) -> Path:
        return home / MANAGED_FOLDER / self.stored_name


class SourceSet(BaseModel):
    """What one build read: `paths` and `websites` (less `excluded`) and the `managed`
    uploads. A managed document replaces a document of `paths` or `websites` with the same id
    (an uploaded new version). A website is re-read at every build, with conditional requests
    (`citadel.ingest.web.fetch_cache`), so a change rebuilds from its pages as they are now."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    paths: tuple[str, ...] = Field(default=(), description="Absolute files and folders "
                                   "given to `citadel ingest`.")
    websites: tuple[str, ...] = Field(default=(), description="The http(s) URLs given to "
                                      "`citadel ingest`: a page to crawl from, or a sitemap "
                                      "(the websites a folder's citadel-sources.toml names "
                                      "are read from it).")
    excluded: tuple[str, ...] = Field(default=(), description="Ids of documents of `paths` "
                                      "or `websites` removed by a document change.")
    managed: tuple[ManagedDocument, ...] = ()

    @classmethod
    def given(cls, paths: Sequence[Path], websites: Sequence[str] = (),
              previous: SourceSet | None = None) -> SourceSet:
        """What `citadel ingest` builds from when given these paths and websites (the
        operator names them again, so nothing of them stays excluded) and the documents
        uploaded before (`citadel.ingest.sources.source_set` tells a URL from a path)."""
        return cls(paths=tuple(str(Path(p).absolute()) for p in paths),
                   websites=tuple(websites),
                   managed=previous.managed if previous is not None else ())

    def managed_ids(self) -> set[str]:
        return {m.document_id for m in self.managed}
