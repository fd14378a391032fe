"""The conversations suite: follow-up questions, asked in threads, scored turn by turn.

A chains file is JSONL, one chain per line (docs/evaluation.md, "The conversations suite"):
`{"id", "kb", "kind", "turns": [{"question", "standalone", "expect", "answer_any",
"cite_any", "not_cite", "allow_conflict", ...}, ...]}`. Each turn is asked through the real
`Engine` with the chain's earlier turns as history, as a door asks it. Chains whose `kb` is
`demo` run over the demo knowledge base (examples/support-kb); a chain naming a knowledge base
of the support dataset runs only when that dataset is found (`support.find_dataset`), each KB
in a home of its own, as the support suite does.

Two scores, each on its own:

* **rewrite right**, for each follow-up (every turn after the first): the standalone
  question Citadel answered equals the labelled one (case and punctuation aside), or
  retrieves it: the top document retrieved for the labelled question is among the top three
  retrieved for the produced one;
* **decision right**, for every turn: the support suite's rule (`support.judge`) on the
  turn's expectation (answer, abstain or conflict).

They are reported overall, per chain kind and per knowledge base, with every miss.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from citadel.engine import Engine
from citadel.evaluation import locations
from citadel.evaluation.datasets import DatasetError
from citadel.evaluation.metrics import document_ranking
from citadel.evaluation.suites import (
    RunOptions,
    SuiteRun,
    _bar,
    _limited,
    ask,
    open_engine,
    record_run,
    row_log,
    score_answer_layers,
)
from citadel.evaluation.support import (
    DOCUMENT_SUFFIXES,
    Decision,
    Expected,
    SupportQuestion,
    _documents,
    _file_names,
    _kb_home,
    _open_kb,
    _read_lines,
    judge,
    load_support,
    miss,
)
from citadel.records import Answer, Turn
from citadel.retrieval.embedders import Embedder, get_embedder

FORMAT_VERSION = "conversations-v1"
DEMO = "demo"
KINDS = ("ellipsis", "pronoun", "what_about", "variant", "standalone", "off_topic")
RETRIEVE_K = 10  # chunks retrieved to rank documents for the rewrite score
TOP_DOCUMENTS = 3
_NOT_WORD = re.compile(r"[^\w]+")


class ChainTurn(Expected):
    """One turn of a chain: what is asked, the question it stands for, what is expected."""

    question: str
    standalone: str


class Chain(BaseModel):
    """One line of a chains file."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str
    kb: str
    kind: Literal["ellipsis", "pronoun", "what_about", "variant", "standalone", "off_topic"]
    turns: tuple[ChainTurn, ...]

    @field_validator("turns")
    @classmethod
    def _some(cls, turns: tuple[ChainTurn, ...]) -> tuple[ChainTurn, ...]:
        if not turns:
            raise ValueError("a chain needs at least one turn")
        return turns

    def rows(self) -> list[SupportQuestion]:
        """Each turn as the support suite's question, whose rules check it and judge it."""
        return [SupportQuestion(
            id=f"{self.id} turn {n}", kb=self.kb, question=t.question, category="conversation",
            **t.model_dump(include=set(Expected.model_fields)))
            for n, t in enumerate(self.turns, start=1)]


@dataclass(frozen=True)
class Chains:
    path: Path
    chains: tuple[Chain, ...]
    sha256: str

    def describe(self, skipped: Sequence[str] = ()) -> dict[str, object]:
        kbs: dict[str, int] = {}
        for c in self.chains:
            kbs[c.kb] = kbs.get(c.kb, 0) + 1
        return {"name": "conversations", "path": str(self.path), "version": FORMAT_VERSION,
                "sha256": self.sha256, "rows": sum(len(c.turns) for c in self.chains),
                "chains": len(self.chains), "kbs": kbs, "skipped": list(skipped)}


def load_chains(path: Path) -> Chains:
    """Read and check a chains file; every problem is a `DatasetError` naming the line."""
    if not path.is_file():
        raise DatasetError(f"conversation chains not found: {path} (pass --chains FILE, "
                           "format in docs/evaluation.md)")
    chains: list[Chain] = []
    seen: set[str] = set()
    for lineno, data in _read_lines(path):
        where = f"{path}:{lineno}"
        try:
            chain = Chain.model_validate(data)
            chain.rows()
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"])
            raise DatasetError(f"{where}: {field + ': ' if field else ''}"
                               f"{first['msg'].removeprefix('Value error, ')}") from None
        if chain.id in seen:
            raise DatasetError(f"{where}: chain id {chain.id!r} appears twice")
        seen.add(chain.id)
        chains.append(chain)
    if not chains:
        raise DatasetError(f"{path} holds no chains")
    return Chains(path, tuple(chains), hashlib.sha256(path.read_bytes()).hexdigest())


# --- scoring ------------------------------------------------------------------------------


def same_question(a: str, b: str) -> bool:
    """Equal but for case and punctuation."""
    return _NOT_WORD.sub(" ", a.lower()).split() == _NOT_WORD.sub(" ", b.lower()).split()


def top_documents(engine: Engine, question: str) -> list[str]:
    """The documents retrieval ranks highest for `question` (at its best chunk)."""
    ranked = engine.retrieve(question, RETRIEVE_K, None, None)
    chunk_ids = [r.chunk_id for r in ranked]
    return document_ranking(chunk_ids, {r.chunk_id: r.chunk.document_id for r in ranked})


@dataclass(frozen=True)
class Rewrite:
    right: bool
    reason: str  # why not, "" when right


def judge_rewrite(engine: Engine, produced: str, labelled: str) -> Rewrite:
    if same_question(produced, labelled):
        return Rewrite(True, "")
    wanted = top_documents(engine, labelled)[:1]
    found = top_documents(engine, produced)[:TOP_DOCUMENTS]
    if wanted and wanted[0] in found:
        return Rewrite(True, "")
    target = wanted[0] if wanted else "nothing"
    return Rewrite(False, f"answered as {produced!r}; the labelled {labelled!r} retrieves "
                          f"{target} first, not among {found}")


class Counts:
    """right/total per group (overall, expectation, kind, knowledge base) of one score."""

    def __init__(self) -> None:
        self.groups: dict[str, dict[str, list[int]]] = {
            "overall": {}, "expect": {}, "kind": {}, "kb": {}}

    def add(self, keys: dict[str, str], right: bool) -> None:
        for group, key in keys.items():
            count = self.groups[group].setdefault(key, [0, 0])
            count[0] += right
            count[1] += 1

    def as_dict(self) -> dict[str, dict[str, dict[str, int]]]:
        return {g: {k: {"right": r, "total": n} for k, (r, n) in sorted(keys.items())}
                for g, keys in self.groups.items() if keys}


# --- the run ------------------------------------------------------------------------------


def run_conversations(
    chains: Chains, options: RunOptions, support: Path | None = None,
    only: Sequence[str] | None = None, embedder: Embedder | None = None,
    homes: Path | None = None,
) -> SuiteRun:
    """Each knowledge base's chains, turn by turn (`options.limit`: the first N chains).
    `support`: the support dataset's folder, or None (its chains are skipped, and said so);
    `only`: these knowledge bases' chains; `homes`: where support KBs are ingested (kept)."""
    selected = [c for c in _limited(chains.chains, options.limit)
                if only is None or c.kb in only]
    by_kb: dict[str, list[Chain]] = {}
    for chain in selected:
        by_kb.setdefault(chain.kb, []).append(chain)
    skipped: list[str] = []
    kbs = {}
    wanted = sorted(name for name in by_kb if name != DEMO)
    if wanted and support is None:
        skipped.append(f"{sum(len(by_kb.pop(n)) for n in wanted)} chains of "
                       f"{', '.join(wanted)}: no support dataset (--dataset DIR)")
    elif wanted:
        if not support.is_dir():
            raise DatasetError(f"support dataset not found: {support} is not a folder")
        present = {p.name for p in support.iterdir()}
        absent = [n for n in wanted if n not in present]
        if absent:
            skipped.append(f"{sum(len(by_kb.pop(n)) for n in absent)} chains of "
                           f"{', '.join(absent)}: not in {support}")
        found = [n for n in wanted if n not in absent]
        kbs = {kb.name: kb for kb in load_support(support, found).kbs} if found else {}
    run = SuiteRun("conversations", chains.describe(skipped),
                   config={"limit_chains": options.limit, "kbs": sorted(by_kb),
                           "rules": "see docs/evaluation.md, The conversations suite"})
    embedder = embedder or get_embedder(options.settings.embedder)
    scores = _Scores(run)
    answers: list[Answer] = []
    for name, group in sorted(by_kb.items()):
        if name == DEMO:
            settings = options.settings.model_copy(update={"home": options.settings.home / DEMO})
            with open_engine([locations.default_kb()], settings, embedder,
                             options.progress) as engine:
                _check_names(group, _file_names(_documents(locations.default_kb())), name)
                answers += _run_chains(group, engine, options, scores)
                record_run(run, answers, engine)
            continue
        kb = kbs[name]
        _check_names(group, _file_names(kb.documents), name)
        with _kb_home(homes, name) as home:
            settings = options.settings.model_copy(update={"home": home})
            with _open_kb(kb, settings, embedder, options.progress) as (engine, _):
                answers += _run_chains(group, engine, options, scores)
                record_run(run, answers, engine)
    run.extra.update(scores.extra())
    return run


def _check_names(chains: Sequence[Chain], known: set[str], kb: str) -> None:
    for chain in chains:
        for t in chain.turns:
            missing = [f for f in (*t.cite_any, *t.not_cite) if f not in known]
            if missing:
                raise DatasetError(f"chain {chain.id} names {', '.join(missing)}, not a "
                                   f"document of the knowledge base {kb} "
                                   f"({', '.join(DOCUMENT_SUFFIXES)} files)")


def _run_chains(chains: Sequence[Chain], engine: Engine, options: RunOptions,
                scores: _Scores) -> list[Answer]:
    answers = []
    label = chains[0].kb
    for chain in _bar(chains, f"eval conversations {label}", options.progress):
        history: list[Turn] = []
        for n, (turn, row) in enumerate(zip(chain.turns, chain.rows(), strict=True)):
            answer = ask(engine, turn.question, options, history=history)
            answers.append(answer)
            produced = answer.standalone.question if answer.standalone else turn.question
            rewrite = judge_rewrite(engine, produced, turn.standalone) if n else None
            scores.add(chain, n, row, answer, judge(row, answer), rewrite, produced, engine,
                       options)
            history.append(Turn(question=turn.question, answer=answer.answer))
    return answers


class _Scores:
    """The run's tallies, counts and misses, turn by turn."""

    def __init__(self, run: SuiteRun) -> None:
        self.run = run
        self.decisions = Counts()
        self.rewrites = Counts()
        self.misses: list[dict[str, Any]] = []

    def add(self, chain: Chain, n: int, row: SupportQuestion, answer: Answer,
            decision: Decision, rewrite: Rewrite | None, produced: str, engine: Engine,
            options: RunOptions) -> None:
        t = self.run.tally
        keys = {"overall": "all", "expect": row.expect, "kind": chain.kind, "kb": chain.kb}
        self.decisions.add(keys, decision.right)
        t.add("decision_accuracy", decision.right,
              None if decision.right else f"{row.id} ({chain.kind}): "
              f"{'; '.join(decision.reasons)}")
        t.add(f"decision_{row.expect}", decision.right)
        if rewrite is not None:
            self.rewrites.add({g: k for g, k in keys.items() if g != "expect"}, rewrite.right)
            t.add("rewrite_right", rewrite.right,
                  None if rewrite.right else f"{row.id} ({chain.kind}): {rewrite.reason}")
        if not decision.right or (rewrite is not None and not rewrite.right):
            found = miss(row, answer, decision)
            found.update(category=chain.kind, standalone=produced,
                         labelled=chain.turns[n].standalone,
                         reasons=[*decision.reasons, *([rewrite.reason] if rewrite and
                                                       not rewrite.right else [])])
            self.misses.append(found)
        layers = score_answer_layers(self.run, row.id, answer, engine, options.scorer)
        self.run.rows.append(row_log(
            row.id, row.question, answer, chain=chain.id, turn=n + 1, kb=chain.kb,
            kind=chain.kind, expect=row.expect, standalone=produced,
            labelled=chain.turns[n].standalone, decision_right=decision.right,
            rewrite_right=None if rewrite is None else rewrite.right,
            reasons=list(decision.reasons) + ([rewrite.reason] if rewrite and rewrite.reason
                                              else []),
            checks=layers))

    def extra(self) -> dict[str, Any]:
        return {"decisions": self.decisions.as_dict(), "rewrites": self.rewrites.as_dict(),
                "misses": self.misses}
