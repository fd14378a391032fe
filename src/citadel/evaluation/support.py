"""The support suite: Citadel's *decision* (answer, abstain, or say the sources disagree) on
customer-support knowledge bases, scored question by question.

A dataset is a folder of knowledge bases (docs/evaluation.md, "The support suite"): one
subfolder per KB holding its documents (`.md`, `.txt`, `.html`; nothing else is ingested),
the operator's `citadel-sources.toml` and `questions.jsonl` (never a document). Each KB is
ingested into a home of its own and every question asked through the real `Engine`.

A row is right when the engine made the decision the row expects (`judge`):

* answer: not abstained, the text holds one of `answer_any`, a cited file is one of
  `cite_any`, none is in `not_cite`, and no conflict unless `allow_conflict`;
* abstain: abstained, citing nothing;
* conflict: `Answer.conflict` is set and the text states one variant of every side, citing
  nothing in `not_cite`.

Text is compared case-insensitively after normalising whitespace, dashes and am/pm
spellings (`normalise`). The answer-side layers (citation integrity, quote validity, ...)
are scored as in every suite.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from citadel.config import ConfigError, Settings
from citadel.engine import Engine
from citadel.evaluation.datasets import DatasetError
from citadel.evaluation.suites import (
    RunOptions,
    SuiteRun,
    _bar,
    _limited,
    ask,
    record_run,
    row_log,
    score_answer_layers,
)
from citadel.ingest.loaders import document_id
from citadel.ingest.operator_metadata import SOURCES_FILE
from citadel.ingest.pipeline import IngestError, ingest
from citadel.records import Answer
from citadel.retrieval.embedders import Embedder, get_embedder

FORMAT_VERSION = "support-v1"
DATASET_ENV = "CITADEL_SUPPORT_DATASET"
QUESTIONS_FILE = "questions.jsonl"
DOCUMENT_SUFFIXES = (".md", ".txt", ".html")
EXPECTATIONS = ("answer", "abstain", "conflict")
CATEGORIES = ("direct", "paraphrase", "numeric", "yes-no", "list", "negation", "html", "txt",
              "front-matter", "detail-absent", "off-topic", "equivalent-values",
              "true-conflict", "superseded", "low-authority", "entity-variant",
              "conversation")  # a turn of a conversation chain (evaluation.conversations)
SHOWN_CHARS = 200  # of an answer's text in the miss listing

Expectation = Literal["answer", "abstain", "conflict"]


# --- the dataset ------------------------------------------------------------------------------


class Expected(BaseModel):
    """What a question expects and what a right answer holds (`judge` checks it)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    expect: Expectation
    answer_any: tuple[str, ...] = ()
    cite_any: tuple[str, ...] = ()
    not_cite: tuple[str, ...] = ()
    sides: tuple[tuple[str, ...], ...] = ()
    allow_conflict: bool = False
    note: str = ""


class SupportQuestion(Expected):
    """One line of a KB's questions.jsonl (fields other than these are ignored)."""

    id: str
    kb: str
    question: str
    category: str

    @model_validator(mode="after")
    def _consistent(self) -> SupportQuestion:
        if not self.id.strip() or not self.question.strip():
            raise ValueError("id and question must not be empty")
        if self.category not in CATEGORIES:
            raise ValueError(f"category {self.category!r} is not one of {', '.join(CATEGORIES)}")
        if self.expect == "answer" and not (self.answer_any and self.cite_any):
            raise ValueError("an answer row needs answer_any and cite_any")
        if self.expect == "conflict" and (len(self.sides) < 2 or not all(self.sides)):
            raise ValueError("a conflict row needs sides: at least two non-empty lists")
        if self.expect != "answer" and self.answer_any:
            raise ValueError(f"answer_any is for answer rows, not {self.expect} rows")
        if self.expect == "abstain" and self.cite_any:
            raise ValueError("an abstain row has no cite_any")
        if self.expect != "conflict" and self.sides:
            raise ValueError("sides are for conflict rows only")
        return self


@dataclass(frozen=True)
class KnowledgeBase:
    name: str
    path: Path
    documents: tuple[str, ...]  # paths relative to the KB folder (POSIX), the ingested files
    questions: tuple[SupportQuestion, ...]


@dataclass(frozen=True)
class SupportDataset:
    path: Path
    kbs: tuple[KnowledgeBase, ...]
    sha256: str  # over every question file, document and operator file

    def describe(self) -> dict[str, object]:
        return {"name": "support", "path": str(self.path), "version": FORMAT_VERSION,
                "sha256": self.sha256, "rows": sum(len(kb.questions) for kb in self.kbs),
                "kbs": {kb.name: len(kb.questions) for kb in self.kbs}}


def find_dataset(explicit: Path | None) -> Path:
    """`--dataset DIR`, else the folder `CITADEL_SUPPORT_DATASET` names; there is no other
    default (the dataset is not part of the repository)."""
    if explicit is not None:
        return explicit
    named = os.environ.get(DATASET_ENV, "").strip()
    if not named:
        raise DatasetError("no support dataset: pass --dataset DIR (a folder of knowledge "
                           f"bases, format in docs/evaluation.md) or set {DATASET_ENV}")
    return Path(named)


def load_support(path: Path, only: Sequence[str] | None = None) -> SupportDataset:
    """Read and check the dataset at `path` (`only`: these KB names). Every problem is a
    `DatasetError` naming the file and line."""
    if not path.is_dir():
        raise DatasetError(f"support dataset not found: {path} is not a folder")
    kbs = [_load_kb(folder) for folder in sorted(path.iterdir()) if _is_kb(folder)]
    if not kbs:
        raise DatasetError(f"{path} holds no knowledge base (a subfolder with "
                           f"{QUESTIONS_FILE} and documents)")
    seen: dict[str, str] = {}
    for kb in kbs:
        for q in kb.questions:
            if q.id in seen:
                raise DatasetError(f"question id {q.id!r} appears in both {seen[q.id]} and "
                                   f"{kb.path / QUESTIONS_FILE}")
            seen[q.id] = str(kb.path / QUESTIONS_FILE)
    digest = _digest(kbs)
    if only:
        names = {kb.name for kb in kbs}
        unknown = [n for n in only if n not in names]
        if unknown:
            raise DatasetError(f"no knowledge base {', '.join(unknown)} in {path} (it has "
                               f"{', '.join(sorted(names))})")
        kbs = [kb for kb in kbs if kb.name in only]
    return SupportDataset(path, tuple(kbs), digest)


def _is_kb(folder: Path) -> bool:
    """A subfolder with questions or documents (a KB, or a broken one that `_load_kb`
    reports); hidden and `_` folders and plain files (README.md, validate.py) are not."""
    if not folder.is_dir() or folder.name.startswith((".", "_")):
        return False
    return (folder / QUESTIONS_FILE).exists() or bool(_documents(folder))


def _documents(folder: Path) -> tuple[str, ...]:
    return tuple(sorted(
        p.relative_to(folder).as_posix() for p in folder.rglob("*")
        if p.is_file() and p.suffix.lower() in DOCUMENT_SUFFIXES
        and not any(part.startswith(".") for part in p.relative_to(folder).parts)))


def _load_kb(folder: Path) -> KnowledgeBase:
    documents = _documents(folder)
    questions_path = folder / QUESTIONS_FILE
    if not questions_path.is_file():
        raise DatasetError(f"{folder}: no {QUESTIONS_FILE} beside its documents")
    if not documents:
        raise DatasetError(f"{folder}: no documents ({', '.join(DOCUMENT_SUFFIXES)})")
    known = _file_names(documents)
    questions = []
    for lineno, data in _read_lines(questions_path):
        where = f"{questions_path}:{lineno}"
        try:
            q = SupportQuestion.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"])
            raise DatasetError(f"{where}: {field + ': ' if field else ''}"
                               f"{first['msg'].removeprefix('Value error, ')}") from None
        if q.kb != folder.name:
            raise DatasetError(f"{where}: question {q.id} names kb {q.kb!r}, but it is in the "
                               f"folder {folder.name!r}")
        missing = [f for f in (*q.cite_any, *q.not_cite) if f not in known]
        if missing:
            raise DatasetError(f"{where}: question {q.id} names {', '.join(missing)}, not a "
                               f"document of {folder} ({', '.join(documents)})")
        questions.append(q)
    if not questions:
        raise DatasetError(f"{questions_path} holds no questions")
    return KnowledgeBase(folder.name, folder, documents, tuple(questions))


def _read_lines(path: Path) -> Iterator[tuple[int, Any]]:
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"cannot read {path}: {exc}") from None
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}:{lineno}: not a JSON object ({exc.msg}, column "
                               f"{exc.colno})") from None
        if not isinstance(data, dict):
            raise DatasetError(f"{path}:{lineno}: not a JSON object")
        yield lineno, data


def _file_names(documents: Sequence[str]) -> set[str]:
    """Every name a question may give a document by: its path in the KB, its file name, or
    its document id."""
    return {name for d in documents for name in (d, PurePosixPath(d).name, document_id(d))}


def _digest(kbs: Sequence[KnowledgeBase]) -> str:
    h = hashlib.sha256()
    for kb in kbs:
        for rel in (*kb.documents, SOURCES_FILE, QUESTIONS_FILE):
            file = kb.path / rel
            if file.is_file():
                h.update(f"{kb.name}/{rel}\0".encode())
                h.update(file.read_bytes())
    return h.hexdigest()


# --- scoring one answer -----------------------------------------------------------------------

_DASH = re.compile(r"\s*[-\u2010\u2011\u2012\u2013\u2014\u2015\u2212]\s*")
_AM_PM = re.compile(r"(\d)\s*([ap])\.?m\b\.?")
_SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """Lower case; whitespace runs one space; every dash '-' with no space around it
    ("9–5", "9 - 5"); "5 PM", "5 p.m.", "5pm" all "5pm"; curly apostrophes straight."""
    text = _SPACE.sub(" ", text.lower().replace("\u2019", "'")).strip()
    return _AM_PM.sub(r"\1\2m", _DASH.sub("-", text))


def stated(text: str, variants: Sequence[str]) -> str | None:
    """The first variant the text holds (normalised substring), or None."""
    haystack = normalise(text)
    return next((v for v in variants if normalise(v) and normalise(v) in haystack), None)


def cited_files(answer: Answer) -> list[str]:
    """The cited documents' files (`Citation.source`), in citation order, once each."""
    return list(dict.fromkeys(c.source for c in answer.citations))


def cites(answer: Answer, names: Sequence[str]) -> list[str]:
    """The cited files that `names` names (by path, file name or document id)."""
    wanted = set(names)
    return list(dict.fromkeys(
        c.source for c in answer.citations
        if wanted & {c.source, PurePosixPath(c.source).name, c.document_id}))


def outcome(answer: Answer) -> str:
    if answer.abstained:
        return "abstained"
    if answer.conflict is not None:
        return f"conflict ({answer.conflict.resolution})"
    return "answered"


@dataclass(frozen=True)
class Decision:
    """Whether one answer made the decision its question expects, and why not."""

    right: bool
    reasons: tuple[str, ...]
    false_conflict: bool  # an answer row answered with a conflict it does not allow


def judge(q: SupportQuestion, answer: Answer) -> Decision:
    reasons: list[str] = []
    forbidden = cites(answer, q.not_cite)
    if forbidden:
        reasons.append(f"cites {', '.join(forbidden)} (not_cite)")
    false_conflict = (q.expect == "answer" and not q.allow_conflict
                      and answer.conflict is not None)
    if q.expect == "answer":
        if answer.abstained:
            reasons.append("abstained")
        elif stated(answer.answer, q.answer_any) is None:
            reasons.append(f"the answer holds none of {list(q.answer_any)}")
        if not answer.abstained and not cites(answer, q.cite_any):
            reasons.append(f"cites none of {list(q.cite_any)}")
        if false_conflict:
            reasons.append("carries a conflict (allow_conflict is false)")
    elif q.expect == "abstain":
        if not answer.abstained:
            reasons.append(f"{outcome(answer)} instead of abstaining")
        if answer.citations:
            reasons.append(f"cites {', '.join(cited_files(answer))}")
    else:
        if answer.conflict is None:
            reasons.append(f"{outcome(answer)}: no conflict")
        for n, side in enumerate(q.sides, start=1):
            if stated(answer.answer, side) is None:
                reasons.append(f"states no variant of side {n} {list(side)}")
    return Decision(not reasons, tuple(reasons), false_conflict)


def conflict_sides(answer: Answer) -> list[str]:
    """Each side of the answer's conflict as "value (document)"."""
    c = answer.conflict
    if c is None:
        return []
    if c.sides:
        return [f"{s.value} ({s.document_id})" for s in c.sides]
    return [f"{v} ({cid.split('#', 1)[0]})" for v, cid in zip(c.values, c.chunk_ids,
                                                               strict=False)]


def expected_text(q: SupportQuestion) -> str:
    if q.expect == "answer":
        return (f"answer with one of {list(q.answer_any)}, citing one of {list(q.cite_any)}"
                + ("" if q.allow_conflict else ", no conflict"))
    if q.expect == "conflict":
        return f"conflict stating {[list(s) for s in q.sides]}"
    return "abstain, citing nothing"


def miss(q: SupportQuestion, answer: Answer, decision: Decision) -> dict[str, Any]:
    """Everything the miss listing shows about one wrong row."""
    v = answer.verdict
    return {
        "id": q.id, "kb": q.kb, "category": q.category, "question": q.question,
        "expected": expected_text(q), "outcome": outcome(answer),
        "answer": _cut(answer.answer), "cited": cited_files(answer),
        "conflict_sides": conflict_sides(answer), "reasons": list(decision.reasons),
        "note": q.note,
        "verdict": None if v is None else {"stage": v.stage, "reason": v.reason,
                                           "explanation": v.explanation},
    }


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS - 1] + "…"


# --- the run ----------------------------------------------------------------------------------


@dataclass
class DecisionCounts:
    """right/total per group: overall, per expectation, per category, per KB."""

    groups: dict[str, dict[str, list[int]]]

    @classmethod
    def empty(cls) -> DecisionCounts:
        return cls({"overall": {}, "expect": {}, "category": {}, "kb": {}})

    def add(self, q: SupportQuestion, right: bool) -> None:
        for group, key in (("overall", "all"), ("expect", q.expect),
                           ("category", q.category), ("kb", q.kb)):
            count = self.groups[group].setdefault(key, [0, 0])
            count[0] += right
            count[1] += 1

    def as_dict(self) -> dict[str, dict[str, dict[str, int]]]:
        return {g: {k: {"right": r, "total": n} for k, (r, n) in sorted(keys.items())}
                for g, keys in self.groups.items()}


def run_support(
    dataset: SupportDataset, options: RunOptions, embedder: Embedder | None = None,
    homes: Path | None = None,
) -> SuiteRun:
    """Each KB ingested into its own home (under `homes`, kept; else a temporary folder,
    removed), then its questions asked (`options.limit`: the first N of each KB)."""
    run = SuiteRun("support", dataset.describe(),
                   config={"limit_per_kb": options.limit, "kbs": [kb.name for kb in dataset.kbs],
                           "rules": "see docs/evaluation.md, The support suite"})
    embedder = embedder or get_embedder(options.settings.embedder)
    counts = DecisionCounts.empty()
    misses: list[dict[str, Any]] = []
    ingested: dict[str, Any] = {}
    answers: list[Answer] = []
    for kb in dataset.kbs:
        questions = list(_limited(kb.questions, options.limit))
        with _kb_home(homes, kb.name) as home:
            settings = options.settings.model_copy(update={"home": home})
            with _open_kb(kb, settings, embedder, options.progress) as (engine, report):
                ingested[kb.name] = report
                for q in _bar(questions, f"eval support {kb.name}", options.progress):
                    answer = ask(engine, q.question, options)
                    answers.append(answer)
                    decision = judge(q, answer)
                    counts.add(q, decision.right)
                    if not decision.right:
                        misses.append(miss(q, answer, decision))
                    run.rows.append(_score_row(run, q, answer, decision, engine, options))
                record_run(run, answers, engine)
    run.extra.update(decisions=counts.as_dict(), misses=misses, ingested=ingested)
    return run


def _score_row(run: SuiteRun, q: SupportQuestion, answer: Answer, decision: Decision,
               engine: Engine, options: RunOptions) -> dict[str, Any]:
    t = run.tally
    t.add("decision_accuracy", decision.right,
          None if decision.right else f"{q.id} ({q.expect}, {q.category}): "
          f"{'; '.join(decision.reasons)}")
    t.add(f"decision_{q.expect}", decision.right)
    if q.expect == "answer" and not q.allow_conflict:
        t.add("false_conflict", decision.false_conflict,
              f"{q.id}: {' | '.join(conflict_sides(answer))}" if decision.false_conflict
              else None)
    layers = score_answer_layers(run, q.id, answer, engine, options.scorer)
    return row_log(q.id, q.question, answer, kb=q.kb, expect=q.expect, category=q.category,
                   right=decision.right, reasons=list(decision.reasons),
                   outcome=outcome(answer), cited=cited_files(answer),
                   conflict_sides=conflict_sides(answer),
                   verdict=answer.verdict.model_dump(mode="json") if answer.verdict else None,
                   note=q.note, checks=layers)


@contextmanager
def _kb_home(homes: Path | None, name: str) -> Iterator[Path]:
    if homes is not None:
        yield homes / name
        return
    with tempfile.TemporaryDirectory(prefix=f"citadel-support-{name}-") as tmp:
        yield Path(tmp)


@contextmanager
def _open_kb(kb: KnowledgeBase, settings: Settings, embedder: Embedder,
             progress: bool) -> Iterator[tuple[Engine, dict[str, Any]]]:
    """Ingest the KB's documents and operator file (nothing else: not its questions) from a
    copy in the home, then open it. An ingest that fails is a `DatasetError` naming the KB."""
    staged = _stage(kb, settings.home / "kb" / kb.name)
    if progress:
        print(f"support: ingesting {kb.name} ({len(kb.documents)} documents)",
              file=sys.stderr, flush=True)
    try:
        report = ingest([staged], settings, embedder=embedder, progress=progress)
    except (IngestError, ConfigError) as exc:
        skipped = "".join(f"; skipped {s.path}: {s.reason}"
                          for s in getattr(exc, "skipped", ()))
        raise DatasetError(f"knowledge base {kb.name} ({kb.path}) cannot be ingested: "
                           f"{exc}{skipped}") from None
    engine = Engine.open(settings, embedder=embedder)
    try:
        yield engine, {"snapshot_id": report.snapshot_id, "documents": report.documents,
                       "chunks": report.chunks,
                       "skipped": [f"{s.path}: {s.reason}" for s in report.skipped]}
    finally:
        engine.close()


def _stage(kb: KnowledgeBase, dest: Path) -> Path:
    if dest.exists():
        shutil.rmtree(dest)
    for rel in (*kb.documents, SOURCES_FILE):
        src = kb.path / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest
