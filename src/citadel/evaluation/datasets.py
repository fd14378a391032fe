"""Versioned evaluation sets: the demo QA set and the poison/conflict cases.

A file is JSON Lines. Every row carries a `version`, or a header line `{"version": ...}`
(a line without a `question`) sets it for the rows after it; all rows must agree. Results record the
version and the file's SHA-256, so an edited file without a new version is still visible.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator


class DatasetError(ValueError):
    """An evaluation file that cannot be used; the message names the file and line."""


class QARow(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    version: str
    question: str
    answerable: bool = True
    kind: Literal["single", "multi", "unanswerable"] = "single"
    gold_chunk_ids: tuple[str, ...] = ()
    gold_document_ids: tuple[str, ...] = ()
    key_facts: tuple[str | tuple[str, ...], ...] = Field(
        default=(), description="Strings a correct answer contains; a list means any of them."
    )
    notes: str = ""

    @model_validator(mode="after")
    def _consistent(self) -> QARow:
        if self.answerable and not (self.gold_chunk_ids or self.gold_document_ids):
            raise ValueError("an answerable row needs gold_chunk_ids or gold_document_ids")
        if not self.answerable and (self.gold_chunk_ids or self.key_facts):
            raise ValueError("an unanswerable row has no gold chunks or key facts")
        if (self.kind == "unanswerable") == self.answerable:
            raise ValueError("kind 'unanswerable' goes with answerable: false, and only it")
        return self

    @property
    def gold_documents(self) -> tuple[str, ...]:
        if self.gold_document_ids:
            return self.gold_document_ids
        return tuple(dict.fromkeys(c.split("#", 1)[0] for c in self.gold_chunk_ids))


class InlineDocument(BaseModel):
    """A document a poison case adds to the knowledge base: written to `path`, then ingested."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    path: str
    text: str


Expected = Literal["conflict", "abstain", "answer-from-authoritative", "ignore-injection"]


class PoisonCase(BaseModel):
    # Written by the conflicts work; unknown keys are kept out of the way, not refused.
    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str
    version: str
    question: str
    documents: tuple[str | InlineDocument, ...] = ()
    expected: Expected
    must_cite: tuple[str, ...] = ()
    must_not_cite: tuple[str, ...] = ()
    must_not_contain: tuple[str, ...] = ()
    notes: str = ""

    @property
    def inline_documents(self) -> tuple[InlineDocument, ...]:
        return tuple(d for d in self.documents if isinstance(d, InlineDocument))


Row = TypeVar("Row", QARow, PoisonCase)


class Dataset(BaseModel, Generic[Row]):
    model_config = ConfigDict(frozen=True)

    name: str
    path: str
    version: str
    sha256: str
    rows: tuple[Row, ...]

    def describe(self) -> dict[str, object]:
        return {"name": self.name, "path": self.path, "version": self.version,
                "sha256": self.sha256, "rows": len(self.rows)}


def _read_jsonl(path: Path) -> tuple[list[tuple[int, dict]], str | None, str]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DatasetError(f"evaluation file not found: {path}") from None
    rows: list[tuple[int, dict]] = []
    header_version: str | None = None
    for lineno, line in enumerate(raw.decode("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
        if not isinstance(obj, dict):
            raise DatasetError(f"{path}:{lineno}: each line must be a JSON object")
        if "question" not in obj and "version" in obj:
            header_version = str(obj["version"])
            continue
        rows.append((lineno, obj))
    return rows, header_version, hashlib.sha256(raw).hexdigest()


def _load(path: Path, name: str, model: type[Row]) -> Dataset[Row]:
    raw_rows, header_version, digest = _read_jsonl(path)
    if not raw_rows:
        raise DatasetError(f"{path}: no rows")
    rows: list[Row] = []
    versions: set[str] = set()
    ids: set[str] = set()
    for lineno, obj in raw_rows:
        if header_version is not None:
            obj.setdefault("version", header_version)
        try:
            row = model.model_validate(obj)
        except ValidationError as exc:
            problem = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'row'}: {e['msg']}" for e in exc.errors()
            )
            raise DatasetError(f"{path}:{lineno}: {problem}") from None
        if row.id in ids:
            raise DatasetError(f"{path}:{lineno}: duplicate id {row.id!r}")
        ids.add(row.id)
        versions.add(row.version)
        rows.append(row)
    if len(versions) != 1:
        raise DatasetError(f"{path}: rows disagree on the version: {sorted(versions)}")
    return Dataset[model](name=name, path=str(path), version=versions.pop(), sha256=digest,
                          rows=tuple(rows))


def load_qa(path: Path) -> Dataset[QARow]:
    return _load(path, "qa", QARow)


def load_poison(path: Path) -> Dataset[PoisonCase]:
    return _load(path, "poison", PoisonCase)
