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

Websites are named here too, each as a `[[websites]]` table (`citadel.ingest.web.site`), and
their pages' metadata is set by URL, a URL or a URL glob in place of the path:

    [[websites]]
    url = "https://help.example.com/"
    include = ["/help/*"]

    [sources."https://help.example.com/policies/*"]
    authority = 0.9

The optional `[examples]` table gives the web page's "Try:" buttons for this knowledge base
(`read_examples`); they are kept with the snapshot (`citadel.knowledge.snapshots.Examples`):

    [examples]
    questions = ["How do I descale my kettle?", "Is the glass kettle dishwasher safe?"]
    customer_questions = ["Where is my order?"]   # the Customer support tab's, if any
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
from citadel.ingest.web.site import Website
from citadel.knowledge.snapshots import MAX_EXAMPLE_CHARS, MAX_EXAMPLES, Examples
from citadel.records import Document

SOURCES_FILE = "citadel-sources.toml"
TABLES = ("sources", "examples", "websites")


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
    data = _read_toml(path)
    tables = data.get("sources", {})
    if not isinstance(tables, dict):
        raise ConfigError(f"{path}: 'sources' must be a table of [sources.\"<path>\"] tables")
    out: dict[str, SourceMetadata] = {}
    for pattern, values in tables.items():
        try:
            out[pattern] = SourceMetadata.model_validate(values)
        except ValidationError as exc:
            raise ConfigError(f"{path}: [sources.{pattern!r}]: {_problems(exc)}") from None
    return out


def read_websites(root: Path) -> tuple[Website, ...]:
    """The `[[websites]]` of `<root>/citadel-sources.toml`, in file order; () without."""
    path = root / SOURCES_FILE
    tables = _read_toml(path).get("websites", [])
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise ConfigError(f"{path}: 'websites' must be [[websites]] tables, each with "
                          'url = "https://…"')
    sites = []
    for n, values in enumerate(tables, start=1):
        try:
            sites.append(Website.model_validate(values))
        except ValidationError as exc:
            raise ConfigError(f"{path}: [[websites]] #{n}: {_problems(exc)}") from None
    return tuple(sites)


def read_examples(paths: Sequence[Path]) -> Examples:
    """The `[examples]` of every ingest root's citadel-sources.toml (a folder given, or the
    folder of a file given, as `[sources]` is read), in the order given, each question once;
    the first `MAX_EXAMPLES` per tab when several roots have more together. None without."""
    roots = dict.fromkeys(p if p.is_dir() else p.parent for p in paths)
    tabs: dict[str, dict[str, None]] = {name: {} for name in Examples.model_fields}
    for root in roots:
        found = _examples_of(root / SOURCES_FILE)
        for name, questions in tabs.items():
            questions.update(dict.fromkeys(getattr(found, name)))
    return Examples(**{name: tuple(q)[:MAX_EXAMPLES] for name, q in tabs.items()})


def _examples_of(path: Path) -> Examples:
    table = _read_toml(path).get("examples", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: 'examples' must be a table: [examples] with "
                          'questions = ["…", "…"]')
    # Said in the file's own terms (a list, not pydantic's tuple); an unknown key and a bad
    # question are pydantic's to name below.
    for name, value in table.items():
        if name not in Examples.model_fields:
            continue
        if not isinstance(value, list):
            raise ConfigError(f"{path}: [examples]: {name} must be a list of questions, e.g. "
                              f'{name} = ["…", "…"]')
        if len(value) > MAX_EXAMPLES:
            raise ConfigError(f"{path}: [examples]: {name} has {len(value)} questions; the "
                              f"page shows at most {MAX_EXAMPLES}")
    try:
        return Examples.model_validate(table)
    except ValidationError as exc:
        raise ConfigError(f"{path}: [examples]: {_problems(exc)} (questions and "
                          f"customer_questions are lists of at most {MAX_EXAMPLES} questions, "
                          f"each a string of 1 to {MAX_EXAMPLE_CHARS} characters)") from None


def _read_toml(path: Path) -> dict:
    """The file's tables; {} without the file."""
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"{path} cannot be read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None
    extra = sorted(set(data) - set(TABLES))
    if extra:
        raise ConfigError(f"{path}: unknown table(s) {extra}; expected [sources.\"<path>\"], "
                          "[[websites]] and [examples]")
    return data


def _problems(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}"
                     for e in exc.errors())


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
    problems = list(unmatched_sources)
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
