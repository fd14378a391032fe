"""Metadata the operator vouches for: `citadel-sources.toml` at the ingest root.

A document's authority, the document it supersedes and its tenant decide which text wins
and whom it is shown to, so they must come from the operator, never from the document's own
content (an HTML page, a review, a scraped file, a Markdown file's front matter). This file
is the one source trusted for them: it maps a path relative to the ingest root (or a glob,
like `[pdf_passwords]` in the settings) to the metadata of every document it matches:

    # citadel-sources.toml
    [sources."gift-cards.html"]
    authority = 0.8

    [sources."reviews-*.html"]
    authority = 0.2
    category = "community"

The exact path wins over globs; among globs the first one that matches, in file order. The
file's values override the document's own (title, category and date from front matter or an
HTML `<head>`). The file itself is never ingested as a document.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import tomllib
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from citadel.config import ConfigError
from citadel.records import Document

SOURCES_FILE = "citadel-sources.toml"


class SourceMetadata(BaseModel):
    """One `[sources."<path or glob>"]` table; unset fields leave the document's own."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    authority: float | None = Field(default=None, ge=0.0, le=1.0)
    supersedes: str | None = Field(default=None, min_length=1)
    tenant: str | None = Field(default=None, min_length=1)
    effective_date: dt.date | None = None
    category: str | None = Field(default=None, min_length=1)
    title: str | None = Field(default=None, min_length=1)


def read_sources_file(root: Path) -> dict[str, SourceMetadata]:
    """The `[sources]` tables of `<root>/citadel-sources.toml`, in file order; {} without the
    file. A malformed file is a `ConfigError`: metadata the operator meant to set must not be
    silently dropped."""
    path = root / SOURCES_FILE
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"{path} cannot be read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None
    extra = sorted(set(data) - {"sources"})
    if extra:
        raise ConfigError(f"{path}: unknown table(s) {extra}; expected [sources.\"<path>\"]")
    tables = data.get("sources", {})
    if not isinstance(tables, dict):
        raise ConfigError(f"{path}: 'sources' must be a table of [sources.\"<path>\"] tables")
    out: dict[str, SourceMetadata] = {}
    for pattern, values in tables.items():
        try:
            out[pattern] = SourceMetadata.model_validate(values)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}"
                                 for e in exc.errors())
            raise ConfigError(f"{path}: [sources.{pattern!r}]: {problems}") from None
    return out


def metadata_for(table: Mapping[str, SourceMetadata], source: str) -> SourceMetadata | None:
    """The entry of a document's path: its exact path first, else the first matching glob."""
    if source in table:
        return table[source]
    return next((m for pattern, m in table.items() if fnmatch.fnmatchcase(source, pattern)),
                None)


def apply_metadata(doc: Document, meta: SourceMetadata | None) -> Document:
    """The document with the operator's values in place of its own."""
    if meta is None:
        return doc
    updates = meta.model_dump(exclude_none=True)
    return Document.model_validate({**doc.model_dump(), **updates}) if updates else doc
