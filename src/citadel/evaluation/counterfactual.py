"""Counterfactual conflicts built from SQuAD 2.0 paragraphs, the way entity-substitution
benchmarks are built (Longpre et al., 2021, "Entity-Based Knowledge Conflicts in QA").

For one answerable question per paragraph whose gold answer is a named entity, date or
number, a *twin* of the paragraph is added to the knowledge base: the same text with every
mention of the answer replaced by another span of the same type taken from elsewhere in the
corpus ("... headquartered in Lyon" / "... headquartered in Turin"). Asked the question, a
trustworthy engine sees two equally authoritative sources that disagree: it must flag the
conflict and cite both sides, never state the swapped answer as fact.

Cases are built by `scripts/build_counterfactual.py` into `eval/counterfactual.jsonl` (only
ids, offsets and the two spans: the paragraph text stays in the shared data file).

Scoring: `conflict_flagged` (a conflict is raised and citations point into both the gold
paragraph and its twin), `fooled` (no conflict, and the answer states the swapped span),
`answer_correctness` (not fooled, and a cited gold answer as in the squad2 suite),
`abstained`.

With a scripted reader (`RunOptions.reader`), the oracle knows the true paragraph's answers
(`CounterfactualCase.answers`), never the swapped span: whatever conflict is flagged, the
decision layer flagged it.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from citadel.evaluation.datasets import DatasetError
from citadel.evaluation.metrics import fact_present
from citadel.evaluation.squad2 import (
    Paragraph,
    Squad2,
    cited_gold,
    select_questions,
    squad_normalize,
    write_corpus,
)
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
    scripted_reader,
)
from citadel.evaluation.tally import RunTally
from citadel.records import Answer, Record
from citadel.retrieval.embedders import Embedder
from citadel.text.analysis import Analyser

VERSION = "counterfactual-v1"
TWIN_SUFFIX = "-cf"
# Spans worth swapping: a different value of one of these types is a different fact.
SWAPPABLE = ("PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART",
             "LAW", "LANGUAGE", "DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "CARDINAL",
             "ORDINAL")


class CounterfactualCase(Record):
    id: str
    version: str = VERSION
    question_id: str
    question: str
    paragraph_id: str
    answers: tuple[str, ...]
    original: str
    replacement: str
    kind: str

    @property
    def twin_id(self) -> str:
        return self.paragraph_id + TWIN_SUFFIX


def mentions(text: str, span: str) -> list[tuple[int, int]]:
    """Offsets of `span` in `text` on word boundaries, exact case."""
    return [(m.start(), m.end()) for m in
            re.finditer(rf"(?<!\w){re.escape(span)}(?!\w)", text)]


def twin_text(paragraph: Paragraph, case: CounterfactualCase) -> str:
    """The paragraph with every mention of the answer replaced."""
    return re.sub(rf"(?<!\w){re.escape(case.original)}(?!\w)", case.replacement,
                  paragraph.text)


def twins(data: Squad2, cases: Sequence[CounterfactualCase]) -> list[Paragraph]:
    out = []
    for case in cases:
        p = data.paragraphs.get(case.paragraph_id)
        if p is None:
            raise DatasetError(f"case {case.id}: no paragraph {case.paragraph_id} in "
                               f"{data.path}")
        if not mentions(p.text, case.original):
            raise DatasetError(f"case {case.id}: {case.original!r} is not in "
                               f"{case.paragraph_id}")
        out.append(Paragraph(case.twin_id, p.article, twin_text(p, case)))
    return out


def build_cases(data: Squad2, analyser: Analyser, seed: int = 0) -> list[CounterfactualCase]:
    """One case per paragraph: its first answerable question whose first gold answer is
    exactly a typed span of the paragraph, swapped for a random span of the same type from
    another paragraph (not equal to any gold answer, not present in this paragraph)."""
    rng = random.Random(seed)
    ids = list(data.paragraphs)
    analyses = analyser.analyse_chunks([data.paragraphs[i].text for i in ids])
    typed: dict[str, dict[tuple[int, int], str]] = {}
    pool: dict[str, dict[str, str]] = {}  # kind -> normalised -> text
    for pid, analysis in zip(ids, analyses, strict=True):
        text = data.paragraphs[pid].text
        spans = typed.setdefault(pid, {})
        for sentence in analysis.sentences:
            for s in sentence.spans:
                if s.kind in SWAPPABLE:
                    spans[(s.start, s.end)] = s.kind
                    pool.setdefault(s.kind, {}).setdefault(
                        squad_normalize(text[s.start:s.end]), text[s.start:s.end])
    by_paragraph: dict[str, list[Any]] = {}
    for q in data.questions:
        if q.answerable and q.answers:
            by_paragraph.setdefault(q.paragraph_id, []).append(q)
    cases: list[CounterfactualCase] = []
    for pid in ids:
        text = data.paragraphs[pid].text
        for q in by_paragraph.get(pid, []):
            start, answer = q.starts[0], q.answers[0]
            kind = typed[pid].get((start, start + len(answer)))
            if kind is None:
                continue
            golds = {squad_normalize(a) for a in q.answers}
            options = sorted(v for n, v in pool[kind].items()
                             if n and n not in golds and not any(n in g or g in n for g in golds)
                             and not mentions(text, v))
            if not options:
                continue
            cases.append(CounterfactualCase(
                id=f"cf-{q.id}", question_id=q.id, question=q.text, paragraph_id=pid,
                answers=tuple(dict.fromkeys(q.answers)), original=answer,
                replacement=rng.choice(options), kind=kind))
            break
    return cases


def write_cases(cases: Sequence[CounterfactualCase], path: Path) -> None:
    path.write_text("".join(c.model_dump_json() + "\n" for c in cases), "utf-8")


def load_cases(path: Path) -> tuple[list[CounterfactualCase], str]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DatasetError(f"cannot read {path}: {exc.strerror or exc}") from None
    cases = []
    for n, line in enumerate(raw.decode("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            cases.append(CounterfactualCase.model_validate_json(line))
        except ValidationError as exc:
            raise DatasetError(f"{path}:{n}: not a counterfactual case "
                               f"({exc.errors()[0]['msg']})") from None
    if not cases:
        raise DatasetError(f"{path} holds no cases")
    return cases, hashlib.sha256(raw).hexdigest()


def run_counterfactual(
    data: Squad2, cases_path: Path, options: RunOptions, embedder: Embedder | None = None,
    articles: Sequence[str] | None = None,
) -> SuiteRun:
    """Every paragraph and every case's twin make the knowledge base (one snapshot whatever
    is asked); the cases asked are those of `articles` (default all), then `limit`."""
    all_cases, digest = load_cases(cases_path)
    chosen = {q.paragraph_id for q in select_questions(data, articles)}
    cases = list(_limited([c for c in all_cases if c.paragraph_id in chosen], options.limit))
    run = SuiteRun("counterfactual",
                   {"name": "counterfactual", "path": str(cases_path), "version": VERSION,
                    "sha256": digest, "rows": len(all_cases), "asked": len(cases),
                    "paragraphs_from": str(data.path), "paragraphs_sha256": data.sha256},
                   config={"twin_suffix": TWIN_SUFFIX})
    corpus = write_corpus([*data.paragraphs.values(), *twins(data, all_cases)],
                          options.settings.home / "corpus")
    answers: list[Answer] = []
    reader = scripted_reader(run, options)
    with open_engine([corpus], options.settings, embedder, options.progress,
                     generator=reader) as engine:
        for case in _bar(cases, "eval counterfactual", options.progress):
            if reader is not None:
                reader.expect(case.question, case.answers)
            answer = ask(engine, case.question, options)
            answers.append(answer)
            run.rows.append(score_case(run, case, answer, engine, options))
        record_run(run, answers, engine)
    return run


def score_case(
    run: SuiteRun, case: CounterfactualCase, answer: Answer, engine: Any, options: RunOptions,
) -> dict[str, Any]:
    t = run.tally
    kind = run.breakdown.setdefault(case.kind, RunTally())
    cited = {c.document_id for c in answer.citations}
    flagged = answer.conflict is not None and {case.paragraph_id, case.twin_id} <= cited
    fooled = (answer.conflict is None and not answer.abstained
              and fact_present(answer.answer, case.replacement))
    correct = not fooled and cited_gold(answer, case.answers) is not None
    where = f"{case.id} ({case.original} -> {case.replacement})"
    for tally in (t, kind):
        tally.add("conflict_flagged", flagged,
                  None if flagged or tally is kind else f"{where}: {answer.answer!r}")
        tally.add("fooled", fooled, f"{where}: {answer.answer!r}" if fooled and tally is t
                  else None)
        tally.add("answer_correctness", correct)
        tally.add("abstained", answer.abstained)
    t.add("conflict_raised", answer.conflict is not None)
    in_context = {cid.split("#", 1)[0] for cid in answer.trace.context_labels.values()}
    t.add("both_in_context", {case.paragraph_id, case.twin_id} <= in_context)
    layers = score_answer_layers(run, case.id, answer, engine, options.scorer)
    return row_log(case.id, case.question, answer, kind=case.kind,
                   paragraph_id=case.paragraph_id, twin_id=case.twin_id,
                   original=case.original, replacement=case.replacement,
                   scores={"flagged": flagged, "fooled": fooled, "correct": correct,
                           "abstained": answer.abstained}, checks=layers)
