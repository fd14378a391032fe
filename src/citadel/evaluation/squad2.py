"""SQuAD 2.0 (official JSON format) as a knowledge base of Wikipedia paragraphs, with
answerable questions and unanswerable ones that look answerable.

The knowledge base is every paragraph of the file, one Markdown document each (the article
title as heading); every question is asked through the real `Engine` against all of them.

Scoring (each layer on its own, docs/evaluation.md):

* answerable: `answer_correctness` — the answer did not abstain, contains a gold answer, and
  a citation's quote contains that same gold answer (case, whitespace and punctuation
  tolerant, on token boundaries); `false_abstention_rate`; `false_conflict` — the answer
  carries a conflict although the knowledge base holds one true answer (SQuAD paragraphs
  are not rewritten: a conflict here is one the engine made up); `span_f1` — SQuAD's token F1 of
  `Answer.span` against the best gold answer (an abstention scores 0; an answer without a
  span is not scored); `evidence_in_context` — the gold paragraph reached the context.
* unanswerable: `abstention_accuracy`.
* the answer-side layers (integrity, quote validity, claim support, completeness) as every
  suite, and retrieval of the gold paragraph (document level).
* with a scripted reader (`RunOptions.reader`), what the decision layer did with it:
  `released_with_gold_in_context` and `withheld_before_model` (answerable, gold paragraph in
  the context: released, or abstained before the reader was asked), `unanswerable_stopped`
  (unanswerable with a non-empty context: abstained, or answered with a conflict).
"""

from __future__ import annotations

import hashlib
import json
import re
import string
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citadel.evaluation.datasets import DatasetError
from citadel.evaluation.metrics import document_ranking, fact_present
from citadel.evaluation.suites import (
    RunOptions,
    SuiteRun,
    _bar,
    _document_of,
    _retrieval,
    ask,
    open_engine,
    record_run,
    row_log,
    score_answer_layers,
    scripted_reader,
)
from citadel.evaluation.tally import RunTally
from citadel.records import Answer
from citadel.retrieval.embedders import Embedder

DEFAULT_FILE = Path("shared") / "data" / "squad2" / "dev-half.json"


@dataclass(frozen=True)
class Paragraph:
    id: str
    article: str
    text: str


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    article: str
    paragraph_id: str
    answerable: bool
    answers: tuple[str, ...]
    starts: tuple[int, ...]


@dataclass(frozen=True)
class Squad2:
    path: Path
    paragraphs: dict[str, Paragraph]
    questions: tuple[Question, ...]
    sha256: str

    def describe(self) -> dict[str, object]:
        return {"name": "squad2", "path": str(self.path), "version": self.path.stem,
                "sha256": self.sha256, "rows": len(self.questions),
                "articles": len({p.article for p in self.paragraphs.values()}),
                "paragraphs": len(self.paragraphs)}

    def articles(self) -> list[str]:
        return list(dict.fromkeys(p.article for p in self.paragraphs.values()))


def find_squad2(start: Path) -> Path | None:
    """`shared/data/squad2/dev-half.json` in `start` or one of its parents."""
    for folder in (start, *start.parents):
        if (folder / DEFAULT_FILE).is_file():
            return folder / DEFAULT_FILE
    return None


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def load_squad2(path: Path) -> Squad2:
    """Paragraph ids are `<article slug>-<index>`, stable for a given file."""
    try:
        raw = path.read_bytes()
        data = json.loads(raw)
        articles = data["data"]
    except OSError as exc:
        raise DatasetError(f"cannot read SQuAD 2.0 file {path}: {exc.strerror or exc}") from None
    except (ValueError, KeyError, TypeError):
        raise DatasetError(f"{path} is not a SQuAD 2.0 JSON file (no data[])") from None
    paragraphs: dict[str, Paragraph] = {}
    questions: list[Question] = []
    try:
        for article in articles:
            title = article["title"].replace("_", " ")
            for i, p in enumerate(article["paragraphs"]):
                pid = f"{slug(title)}-{i:03d}"
                paragraphs[pid] = Paragraph(pid, title, p["context"])
                for qa in p["qas"]:
                    answers = qa.get("answers") or []
                    questions.append(Question(
                        id=qa["id"], text=qa["question"].strip(), article=title,
                        paragraph_id=pid, answerable=not qa.get("is_impossible", False),
                        answers=tuple(a["text"] for a in answers),
                        starts=tuple(a["answer_start"] for a in answers)))
    except (KeyError, TypeError) as exc:
        raise DatasetError(f"{path}: malformed SQuAD 2.0 entry ({exc})") from None
    if not questions:
        raise DatasetError(f"{path} holds no questions")
    return Squad2(path, paragraphs, tuple(questions), hashlib.sha256(raw).hexdigest())


def write_corpus(paragraphs: Sequence[Paragraph], folder: Path) -> Path:
    """One Markdown file per paragraph (`<id>.md`: the article title as heading, then the
    paragraph), so document_id == paragraph id. Unchanged files are not rewritten; files of
    paragraphs not given are removed."""
    folder.mkdir(parents=True, exist_ok=True)
    wanted = set()
    for p in paragraphs:
        body = f"# {p.article}\n\n{p.text.strip()}\n"
        path = folder / f"{p.id}.md"
        wanted.add(path.name)
        if not path.is_file() or path.read_text("utf-8") != body:
            path.write_text(body, "utf-8")
    for stale in folder.glob("*.md"):
        if stale.name not in wanted:
            stale.unlink()
    return folder


# --- SQuAD's answer normalisation and token F1 ----------------------------------------------

_ARTICLES = re.compile(r"\b(a|an|the)\b")


def squad_normalize(text: str) -> str:
    """Lower case, no punctuation, no articles, single spaces (the official script's)."""
    text = "".join(ch for ch in text.lower() if ch not in string.punctuation)
    return " ".join(_ARTICLES.sub(" ", text).split())


def token_f1(prediction: str, gold: str) -> float:
    pred, ref = squad_normalize(prediction).split(), squad_normalize(gold).split()
    if not pred or not ref:
        return float(pred == ref)
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def cited_gold(answer: Answer, golds: Sequence[str]) -> str | None:
    """A gold answer both stated by the answer and contained in one of its citations' quotes."""
    if answer.abstained:
        return None
    for gold in golds:
        if fact_present(answer.answer, gold) and any(
                fact_present(c.quote, gold) for c in answer.citations):
            return gold
    return None


# --- the suite ------------------------------------------------------------------------------


def select_questions(data: Squad2, articles: Sequence[str] | None) -> list[Question]:
    if not articles:
        return list(data.questions)
    known = {a.lower(): a for a in data.articles()} | {slug(a): a for a in data.articles()}
    unknown = [a for a in articles if a.lower() not in known and slug(a) not in known]
    if unknown:
        raise DatasetError(f"no such article(s) {unknown}; the file has {data.articles()}")
    chosen = {known.get(a.lower()) or known[slug(a)] for a in articles}
    return [q for q in data.questions if q.article in chosen]


def spread(questions: Sequence[Question], limit: int | None) -> list[Question]:
    """The first `limit` questions of an even, deterministic spread over the whole list (a
    prefix would be one article only)."""
    if limit is None or limit >= len(questions):
        return list(questions)
    step = len(questions) / limit
    return [questions[int(i * step)] for i in range(limit)]


def gold_places(q: Question, paragraph: Paragraph) -> list[tuple[str, int, int]]:
    """Where `q`'s gold answers are in its paragraph's document (as `write_corpus` writes
    it): (document_id, start, end)."""
    if not q.answerable:
        return []
    shift = len(f"# {paragraph.article}\n\n") - (len(paragraph.text) -
                                                len(paragraph.text.lstrip()))
    return [(paragraph.id, shift + start, shift + start + len(a))
            for a, start in zip(q.answers, q.starts, strict=True)]


def run_squad2(
    data: Squad2, options: RunOptions, embedder: Embedder | None = None,
    articles: Sequence[str] | None = None,
) -> SuiteRun:
    questions = spread(select_questions(data, articles), options.limit)
    k = options.k or options.settings.top_k
    run = SuiteRun("squad2", {**data.describe(), "asked": len(questions),
                              "articles_asked": sorted({q.article for q in questions})},
                   config={"k": k, "ndcg_k": 10, "retrieval_level": "document"})
    corpus = write_corpus(list(data.paragraphs.values()), options.settings.home / "corpus")
    answers: list[Answer] = []
    reader = scripted_reader(run, options)
    with open_engine([corpus], options.settings, embedder, options.progress,
                     generator=reader) as engine:
        for q in _bar(questions, "eval squad2", options.progress):
            if reader is not None:
                reader.expect(q.text, q.answers if q.answerable else (),
                              gold_places(q, data.paragraphs[q.paragraph_id]))
            answer = ask(engine, q.text, options)
            answers.append(answer)
            run.rows.append(score_row(run, q, answer, engine, k, options))
        record_run(run, answers, engine)
    return run


def score_decision(
    t: RunTally, q: Question, answer: Answer, in_context: bool
) -> dict[str, bool]:
    """What the decision layer did with a scripted reader's answer. Answerable with the gold
    paragraph in the context (a reader could answer): released, or withheld before the
    reader was asked. Unanswerable with something in the context (a reader could be
    fooled): stopped, by abstaining or by flagging a conflict."""
    if q.answerable:
        if not in_context:
            return {}
        released = not answer.abstained
        skipped = answer.trace.generation_skipped is not None
        t.add("released_with_gold_in_context", released,
              None if released else f"{q.id}: withheld {q.text!r} with its gold paragraph "
              f"in the context ({answer.trace.generation_skipped or 'after the reader'})")
        t.add("withheld_before_model", skipped)
        return {"released": released, "withheld_before_model": skipped}
    if not answer.trace.context_labels:
        return {}
    stopped = answer.abstained or answer.conflict is not None
    t.add("unanswerable_stopped", stopped,
          None if stopped else f"{q.id}: released {answer.answer!r} for unanswerable "
          f"{q.text!r}")
    return {"stopped": stopped}


def score_row(
    run: SuiteRun, q: Question, answer: Answer, engine: Any, k: int, options: RunOptions,
) -> dict[str, Any]:
    t = run.tally
    by_article = run.breakdown.setdefault(q.article, RunTally())
    retrieved = list(answer.trace.retrieved)
    documents = document_ranking(retrieved, _document_of(engine, retrieved))
    in_context = q.paragraph_id in {cid.split("#", 1)[0] for cid in
                                     answer.trace.context_labels.values()}
    scores: dict[str, Any] = {"abstained": answer.abstained, "evidence_in_context": in_context,
                              "conflict": answer.conflict is not None}
    scores.update(_retrieval(t, documents, [q.paragraph_id], k, "document_"))
    span = answer.span.text if answer.span is not None else None
    if q.answerable:
        gold = cited_gold(answer, q.answers)
        correct = gold is not None
        why = ("abstained" if answer.abstained else
               f"no cited gold answer {list(dict.fromkeys(q.answers))} in {answer.answer!r}")
        for tally in (t, by_article):
            tally.add("answer_correctness", correct,
                      None if correct or tally is by_article else f"{q.id}: {why}")
            tally.add("false_abstention_rate", answer.abstained)
            tally.add("false_conflict", answer.conflict is not None,
                      f"{q.id}: conflict on {q.text!r}: {list(answer.conflict.values)}"
                      if answer.conflict is not None and tally is t else None)
        t.add("evidence_in_context", in_context)
        if span is not None or answer.abstained:
            f1 = max((token_f1(span, g) for g in q.answers), default=0.0) if span else 0.0
            t.add("span_f1", f1)
            by_article.add("span_f1", f1)
            scores["span_f1"] = round(f1, 4)
        scores["correct"] = correct
    else:
        for tally in (t, by_article):
            tally.add("abstention_accuracy", answer.abstained,
                      None if answer.abstained or tally is by_article else
                      f"{q.id}: answered {q.text!r} with {answer.answer!r}")
    if options.reader is not None:
        scores.update(score_decision(t, q, answer, in_context))
    layers = score_answer_layers(run, q.id, answer, engine, options.scorer)
    return row_log(q.id, q.text, answer, article=q.article, paragraph_id=q.paragraph_id,
                   answerable=q.answerable, gold_answers=list(dict.fromkeys(q.answers)),
                   span=span, scores=scores, checks=layers)
