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
HTML `<head>`). The file itself is never ingested as a document. An entry that matches no
file, and a `supersedes` that names no document, stop the ingest (`rule_problems`).
"""

from __future__ import annotations

import datetime as dt
import difflib
import fnmatch
import tomllib
from collections.abc import Mapping, Sequence
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


def matches(pattern: str, source: str) -> bool:
    """Whether a `[sources]` key (a path relative to the ingest root, or a glob) names
    `source`."""
    return pattern == source or fnmatch.fnmatchcase(source, pattern)


def metadata_for(table: Mapping[str, SourceMetadata], source: str) -> SourceMetadata | None:
    """The entry of a document's path: its exact path first, else the first matching glob."""
    if source in table:
        return table[source]
    return next((m for pattern, m in table.items() if matches(pattern, source)), None)


def rule_problems(documents: Sequence[Document], unmatched_sources: Sequence[str] = ()
                  ) -> list[str]:
    """Operator rules that name no document: a `[sources]` entry matching no file of its
    folder (`LoadedCorpus.unmatched_sources`), and a `supersedes` naming no document of the
    ingest. Either is an ingest error, not a warning: a typo there changes answers without
    a sound (a retired policy stays evidence beside its successor and answers turn into "the
    sources disagree"; a page keeps the default authority the operator meant to lower)."""
    ids = sorted({d.document_id for d in documents})
    problems = [f"{entry} matches no file of that folder" for entry in unmatched_sources]
    for doc in documents:
        if doc.supersedes and doc.supersedes not in ids:
            near = difflib.get_close_matches(doc.supersedes, ids, n=1)
            problems.append(
                f"{doc.source} supersedes {doc.supersedes!r}, which is no document of this "
                "ingest" + (f" (did you mean {near[0]!r}?)" if near else "")
                + f": correct it in {SOURCES_FILE}, or remove `supersedes` if that document "
                "is gone")
    return problems


def apply_metadata(doc: Document, meta: SourceMetadata | None) -> Document:
    """The document with the operator's values in place of its own."""
    if meta is None:
        return doc
    updates = meta.model_dump(exclude_none=True)
    return Document.model_validate({**doc.model_dump(), **updates}) if updates else doc
