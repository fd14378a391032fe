"""The three suites: `demo` (QA over the demo KB), `poison` (conflict and poison cases) and
`scifact` (retrieval on SciFact's test queries + claim-support calibration).

Each suite ingests its own knowledge base into its own home (never the user's active one),
asks every row through the real `Engine`, and records what the engine did: it measures the
engine as it is, never assumes numbers.
"""

from __future__ import annotations

import hashlib
import shutil
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from citadel.answering.generators import Generator
from citadel.config import Settings
from citadel.engine import Engine
from citadel.evaluation.calibration import accuracy_at, calibrate, is_calibration_half
from citadel.evaluation.claims import ClaimSupportScorer, LexicalClaimScorer
from citadel.evaluation.datasets import Dataset, PoisonCase, QARow
from citadel.evaluation.metrics import (
    document_ranking,
    missing_facts,
    ndcg_at_k,
    recall_at_k,
    reciprocal_rank,
)
from citadel.evaluation.poison import judge
from citadel.evaluation.scifact import SciFact, rationale_pairs, write_corpus
from citadel.evaluation.scoring import score_answer
from citadel.evaluation.scripted_readers import READERS, ScriptedReader, make_reader
from citadel.evaluation.tally import RunTally
from citadel.ingest.pipeline import ingest
from citadel.records import Answer
from citadel.retrieval.embedders import Embedder, get_embedder

NDCG_K = 10
RUN_FIELDS = ("snapshot_id", "backend", "strategy", "generator", "prompt_version",
              "retrieval_config_version")
# Suites that know each question's gold answers, so a scripted reader can stand in for the
# model (`RunOptions.reader`).
READER_SUITES = ("squad2", "counterfactual")


@dataclass
class SuiteRun:
    """What one suite measured: tallies, failures, per-row log, and how it ran."""

    suite: str
    dataset: dict[str, object]
    tally: RunTally = field(default_factory=RunTally)
    rows: list[dict[str, Any]] = field(default_factory=list)
    run: dict[str, object] = field(default_factory=dict)
    config: dict[str, object] = field(default_factory=dict)
    extra: dict[str, object] = field(default_factory=dict)
    breakdown: dict[str, RunTally] = field(default_factory=dict)


@dataclass(frozen=True)
class RunOptions:
    settings: Settings
    scorer: ClaimSupportScorer
    k: int | None = None
    progress: bool = True
    limit: int | None = None
    # Score `Engine.stream` (what the HTTP stream and the page show) instead of `answer()`.
    stream: bool = False
    # A scripted reader (`scripted_readers.READERS`) instead of the configured generator, to
    # measure the decision layer apart from any model; READER_SUITES only.
    reader: str | None = None

    def __post_init__(self) -> None:
        if self.reader is not None and self.reader not in READERS:
            raise ValueError(f"unknown reader {self.reader!r}: choose "
                             f"{' or '.join(READERS)}")


class StreamMismatch(RuntimeError):
    """A stream whose released text is not its final answer, or that ended without one."""


def ask(engine: Engine, question: str, options: RunOptions, **kwargs: Any) -> Answer:
    """The engine's answer to one suite question: `answer()`, or with `options.stream` the
    final answer of `stream()`, checked to be exactly the text its deltas released (a suite
    then scores what a streaming client was shown)."""
    if not options.stream:
        return engine.answer(question, **kwargs)
    released: list[str] = []
    final: Answer | None = None
    for event in engine.stream(question, **kwargs):
        if event.type == "delta":
            released.append(event.text)
        elif event.type == "done":
            final = event.answer
        elif event.type == "error":
            raise StreamMismatch(f"the stream for {question!r} failed: {event.message}")
    if final is None:
        raise StreamMismatch(f"the stream for {question!r} ended without a done event")
    if "".join(released) != final.answer:
        raise StreamMismatch(f"the stream for {question!r} released other text than its "
                             "final answer")
    return final


@contextmanager
def open_engine(
    kb_paths: Sequence[Path], settings: Settings, embedder: Embedder | None, progress: bool,
    generator: Generator | None = None,
) -> Iterator[Engine]:
    """Ingest (or reuse) the suite's knowledge base in `settings.home`, then open it, with
    `generator` (e.g. a scripted reader) instead of the configured one when given."""
    embedder = embedder or get_embedder(settings.embedder)
    ingest(list(kb_paths), settings, embedder=embedder, progress=progress)
    engine = Engine.open(settings, embedder=embedder, generator=generator)
    try:
        yield engine
    finally:
        engine.close()


def refuse_reader(suite: str, options: RunOptions) -> None:
    """A scripted reader needs each question's gold answers: a suite without them refuses
    one (ValueError) rather than silently run the configured generator."""
    if options.reader is not None and suite not in READER_SUITES:
        raise ValueError(f"--reader needs gold answers: the {suite} suite has none to give "
                         f"it (use --suite {' or '.join(READER_SUITES)})")


def scripted_reader(run: SuiteRun, options: RunOptions) -> ScriptedReader | None:
    """The run's scripted reader (recorded in its config, so its results say which
    instrument answered), or None: the configured generator answers."""
    refuse_reader(run.suite, options)
    if options.reader is None:
        return None
    run.config["reader"] = options.reader
    return make_reader(options.reader)


def _bar(items: Sequence[Any], desc: str, progress: bool) -> tqdm:
    return tqdm(items, desc=desc, unit="q", disable=not progress, file=sys.stderr)


def _limited(rows: Sequence[Any], limit: int | None) -> Sequence[Any]:
    return rows if limit is None else rows[:limit]


def record_run(run: SuiteRun, answers: Sequence[Answer], engine: Engine) -> None:
    """What ran, read from the requests' traces (engine attributes when nothing ran)."""
    fallback = {
        "snapshot_id": engine.index.snapshot_id, "backend": engine.index.backend,
        "strategy": engine.index.strategy, "generator": engine.generator.name,
        "prompt_version": engine.generator.prompt_version,
        "retrieval_config_version": engine.settings.retrieval_config_version,
    }
    for name in RUN_FIELDS:
        seen = sorted({getattr(a.trace, name) for a in answers if getattr(a.trace, name)})
        seen = sorted(set(seen) | set(_as_list(run.run.get(name))))
        run.run[name] = seen[0] if len(seen) == 1 else (seen or fallback[name])


def _as_list(value: object) -> list[str]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [str(value)]


def score_answer_layers(
    run: SuiteRun, row_id: str, answer: Answer, engine: Engine, scorer: ClaimSupportScorer
) -> dict[str, Any]:
    """Citation integrity, quote validity, claim support, completeness for one answer."""
    scored = score_answer(answer, engine.index, scorer)
    t = run.tally
    for c in scored.citations:
        where = f"{row_id} [{c.label}] {c.chunk_id}"
        t.add("citation_integrity", c.integrity_failure is None,
              None if c.integrity_failure is None else f"{where}: {c.integrity_failure}")
        t.add("quote_validity", c.quote_failure is None,
              None if c.quote_failure is None else f"{where}: {c.quote_failure}")
        t.add("claim_support", c.supported,
              None if c.supported else f"{where}: support {c.support:.2f} for "
              f"{c.claim!r} from {c.quote!r}")
    for _ in range(scored.supported_sentences):
        t.add("citation_completeness", True)
    for sentence in scored.unsupported:
        t.add("citation_completeness", False, f"{row_id}: no supporting citation for {sentence!r}")
    return {
        "citations": [
            {"label": c.label, "chunk_id": c.chunk_id, "quote": c.quote, "claim": c.claim,
             "support": c.support, "integrity_failure": c.integrity_failure,
             "quote_failure": c.quote_failure}
            for c in scored.citations
        ],
        "factual_sentences": scored.factual_sentences,
        "unsupported_sentences": list(scored.unsupported),
    }


def row_log(row_id: str, question: str, answer: Answer, **extra: Any) -> dict[str, Any]:
    return {
        "id": row_id,
        "question": question,
        "retrieved": list(answer.trace.retrieved),
        "context_labels": dict(answer.trace.context_labels),
        "dropped_citations": [d.model_dump(mode="json") for d in answer.trace.citations_dropped],
        **extra,
        "response": answer.model_dump(mode="json"),
    }


def _retrieval(
    t: RunTally, ranking: Sequence[str], gold: Sequence[str], k: int, prefix: str = ""
) -> dict[str, float]:
    values = {
        f"{prefix}recall_at_k": recall_at_k(ranking, gold, k),
        f"{prefix}ndcg_at_10": ndcg_at_k(ranking, gold, NDCG_K),
        f"{prefix}mrr": reciprocal_rank(ranking, gold, NDCG_K),
    }
    for name, value in values.items():
        t.add(name, value)
    return values


# --- demo -------------------------------------------------------------------------------------


def run_qa(
    dataset: Dataset[QARow], kb_paths: Sequence[Path], options: RunOptions,
    embedder: Embedder | None = None,
) -> SuiteRun:
    refuse_reader("demo", options)
    with open_engine(kb_paths, options.settings, embedder, options.progress) as engine:
        return evaluate_qa(dataset, engine, options)


def evaluate_qa(dataset: Dataset[QARow], engine: Engine, options: RunOptions) -> SuiteRun:
    """Ask every row; score retrieval against its gold ids, correctness against its key
    facts, abstention against `answerable`, and the answer-side layers."""
    k = options.k or engine.settings.top_k
    run = SuiteRun("demo", dataset.describe(), config={"k": k, "ndcg_k": NDCG_K,
                                                       "retrieval_level": "chunk"})
    answers: list[Answer] = []
    for row in _bar(_limited(dataset.rows, options.limit), "eval demo", options.progress):
        answer = ask(engine, row.question, options)
        answers.append(answer)
        run.rows.append(_score_qa_row(run, row, answer, engine, k, options.scorer))
    record_run(run, answers, engine)
    return run


def _score_qa_row(
    run: SuiteRun, row: QARow, answer: Answer, engine: Engine, k: int,
    scorer: ClaimSupportScorer,
) -> dict[str, Any]:
    t = run.tally
    kind = run.breakdown.setdefault(row.kind, RunTally())
    retrieved = list(answer.trace.retrieved)
    scores: dict[str, Any] = {"abstained": answer.abstained}
    if row.answerable:
        documents = document_ranking(retrieved, _document_of(engine, retrieved))
        if row.gold_chunk_ids:
            scores.update(_retrieval(t, retrieved, row.gold_chunk_ids, k))
            _retrieval(kind, retrieved, row.gold_chunk_ids, k)
        scores.update(_retrieval(t, documents, row.gold_documents, k, "document_"))
        t.add("false_abstention_rate", answer.abstained,
              f"{row.id}: abstained on {row.question!r}" if answer.abstained else None)
        kind.add("false_abstention_rate", answer.abstained)
        if row.key_facts:
            missing = missing_facts(answer.answer, row.key_facts)
            correct = not answer.abstained and not missing
            why = "abstained" if answer.abstained else f"missing {missing} in {answer.answer!r}"
            t.add("answer_correctness", correct, None if correct else f"{row.id}: {why}")
            kind.add("answer_correctness", correct)
            scores.update(correct=correct, missing_facts=missing)
    else:
        t.add("abstention_accuracy", answer.abstained,
              None if answer.abstained else f"{row.id}: answered {row.question!r} with "
              f"{answer.answer!r}")
        kind.add("abstention_accuracy", answer.abstained)
    layers = score_answer_layers(run, row.id, answer, engine, scorer)
    return row_log(row.id, row.question, answer, kind=row.kind, answerable=row.answerable,
                   gold_chunk_ids=list(row.gold_chunk_ids),
                   gold_document_ids=list(row.gold_documents), scores=scores, checks=layers)


def _document_of(engine: Engine, chunk_ids: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for cid in chunk_ids:
        chunk = engine.index.get_chunk(cid)
        if chunk is not None:
            out[cid] = chunk.document_id
    return out


# --- poison -----------------------------------------------------------------------------------


def run_poison(
    dataset: Dataset[PoisonCase], kb_paths: Sequence[Path], options: RunOptions,
    embedder: Embedder | None = None,
) -> SuiteRun:
    """Cases without inline documents run on the demo KB; cases that bring documents run on
    a copy of it with those documents added (one knowledge base per distinct set)."""
    run = SuiteRun("poison", dataset.describe(), config={"rules": "see docs/evaluation.md"})
    refuse_reader(run.suite, options)
    cases = list(_limited(dataset.rows, options.limit))
    groups: dict[str, list[PoisonCase]] = {}
    for case in cases:
        groups.setdefault(_inline_key(case), []).append(case)
    embedder = embedder or get_embedder(options.settings.embedder)
    answers: list[Answer] = []
    bar = _bar(cases, "eval poison", options.progress)
    for key, group in sorted(groups.items()):
        settings, paths = options.settings, list(kb_paths)
        if key:
            home = options.settings.home / f"poison-{key}"
            paths = [_kb_with(kb_paths, group[0], home / "kb")]
            settings = options.settings.model_copy(update={"home": home})
        with open_engine(paths, settings, embedder, options.progress) as engine:
            present = _document_ids(engine, paths)
            for case in group:
                answer = ask(engine, case.question, options)
                answers.append(answer)
                run.rows.append(_score_poison_case(run, case, answer, engine, present,
                                                   options.scorer))
                bar.update(1)
            record_run(run, answers, engine)
    bar.close()
    return run


def _score_poison_case(
    run: SuiteRun, case: PoisonCase, answer: Answer, engine: Engine, present: set[str],
    scorer: ClaimSupportScorer,
) -> dict[str, Any]:
    def is_flagged(chunk_id: str) -> bool:
        chunk = engine.index.get_chunk(chunk_id)
        return bool(chunk and chunk.suspicious)

    verdict = judge(case, answer, is_flagged)
    named = {d for d in case.documents if isinstance(d, str)}
    absent = sorted((named | set(case.must_cite) | set(case.must_not_cite)) - present)
    reasons = list(verdict.reasons)
    if absent:  # a case about documents the KB lacks tests nothing: it fails, loudly
        reasons.append(f"documents not in the knowledge base: {absent}")
    passed = not reasons
    run.tally.add("poison_pass_rate", passed,
                  None if passed else f"{case.id} ({case.expected}): {'; '.join(reasons)}")
    run.breakdown.setdefault(case.expected, RunTally()).add("poison_pass_rate", passed)
    layers = score_answer_layers(run, case.id, answer, engine, scorer)
    return row_log(case.id, case.question, answer, expected=case.expected,
                   must_cite=list(case.must_cite), must_not_cite=list(case.must_not_cite),
                   passed=passed, reasons=reasons, checks=layers)


def _inline_key(case: PoisonCase) -> str:
    docs = sorted((d.path, d.text) for d in case.inline_documents)
    if not docs:
        return ""
    return hashlib.sha256(repr(docs).encode()).hexdigest()[:10]


def _kb_with(kb_paths: Sequence[Path], case: PoisonCase, dest: Path) -> Path:
    """A copy of the knowledge base plus the case's inline documents."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for src in kb_paths:
        if src.is_dir():
            shutil.copytree(src, dest, dirs_exist_ok=True)
        else:
            shutil.copy2(src, dest / src.name)
    for doc in case.inline_documents:
        target = (dest / doc.path).resolve()
        if dest.resolve() not in target.parents:
            raise ValueError(f"case {case.id}: document path {doc.path!r} leaves the KB folder")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(doc.text, "utf-8")
    return dest


def _document_ids(engine: Engine, paths: Sequence[Path]) -> set[str]:
    from citadel.ingest.loaders import load_corpus

    corpus = load_corpus(paths, engine.settings.max_file_bytes)
    return {d.document_id for d in corpus.documents if engine.index.get_document(d.document_id)}


# --- scifact ----------------------------------------------------------------------------------

SCIFACT_RETRIEVE = 100  # chunks fetched per query, so that >= 10 distinct abstracts remain


def run_scifact(
    data: SciFact, options: RunOptions, embedder: Embedder | None = None
) -> SuiteRun:
    """Document-level retrieval on the test queries (a document ranks at its best chunk),
    the answer-side layers on the same requests, and the claim scorer's calibration."""
    settings = options.settings
    k = options.k or NDCG_K
    run = SuiteRun("scifact", data.describe(),
                   config={"k": k, "ndcg_k": NDCG_K, "retrieval_level": "document",
                           "chunks_retrieved_per_query": SCIFACT_RETRIEVE})
    refuse_reader(run.suite, options)
    started = time.perf_counter()
    corpus = write_corpus(data, settings.home / "corpus")
    answers: list[Answer] = []
    with open_engine([corpus], settings, embedder, options.progress) as engine:
        run.extra["ingest_seconds"] = round(time.perf_counter() - started, 1)
        for query in _bar(_limited(data.test, options.limit), "eval scifact", options.progress):
            answer = ask(engine, query.text, options, top_k=SCIFACT_RETRIEVE)
            answers.append(answer)
            retrieved = list(answer.trace.retrieved)
            documents = document_ranking(retrieved, _document_of(engine, retrieved))
            scores = _retrieval(run.tally, documents, sorted(query.relevant), k)
            layers = score_answer_layers(run, query.id, answer, engine, options.scorer)
            run.rows.append(row_log(query.id, query.text, answer,
                                    relevant=sorted(query.relevant),
                                    retrieved_documents=documents[:NDCG_K], scores=scores,
                                    checks=layers))
        record_run(run, answers, engine)
    contradict, unrelated = rationale_pairs(data)
    run.extra["claim_support_calibration"] = {
        "support_vs_contradict": calibrate(options.scorer, contradict),
        "support_vs_random_sentence": calibrate(options.scorer, unrelated),
    }
    for name, result in (("claim_scorer_accuracy_vs_contradict",
                          run.extra["claim_support_calibration"]["support_vs_contradict"]),
                         ("claim_scorer_accuracy_vs_random",
                          run.extra["claim_support_calibration"]["support_vs_random_sentence"])):
        held_out = result["held_out_at_scorer_threshold"]
        run.tally.add_value(name, held_out["balanced_accuracy"],
                            held_out["n_positive"] + held_out["n_negative"])
    return run


def run_claims(data: SciFact, options: RunOptions) -> SuiteRun:
    """The claim scorer alone on SciFact's held-out SUPPORT vs CONTRADICT rationale pairs
    (no knowledge base): its balanced accuracy at its own threshold and, for any scorer
    but the lexical one, the lexical scorer's on the same pairs and how often they agree.
    `limit` takes that many pairs spread evenly over the held-out half."""
    contradict, _ = rationale_pairs(data)
    held_out = [p for p in contradict if not is_calibration_half(p.claim_id)]
    pairs = _spread(held_out, options.limit)
    run = SuiteRun("claims", {**data.describe(), "pairs": len(pairs),
                              "held_out_pairs": len(held_out)},
                   config={"task": "SUPPORT vs CONTRADICT rationale, held-out half"})
    scorer, lexical = options.scorer, LexicalClaimScorer()
    compare = scorer.name != lexical.name
    scored, baseline = [], []
    for pair in _bar(pairs, "eval claims", options.progress):
        says = scorer.score(pair.claim, pair.evidence) >= scorer.threshold
        scored.append((float(says), pair.supports))
        row: dict[str, Any] = {"id": pair.claim_id, "claim": pair.claim,
                               "evidence": pair.evidence, "supports": pair.supports,
                               "scorer_supports": says}
        if compare:
            lex = lexical.score(pair.claim, pair.evidence) >= lexical.threshold
            baseline.append((float(lex), pair.supports))
            run.tally.add("agreement_with_lexical", lex == says)
            row["lexical_supports"] = lex
        if hasattr(scorer, "verdict"):
            row["verdict"] = scorer.verdict(pair.claim, pair.evidence)
        run.tally.add("claim_scorer_accuracy", says == pair.supports,
                      None if says == pair.supports else
                      f"{pair.claim_id}: {'supported' if says else 'not supported'}, gold "
                      f"{'SUPPORT' if pair.supports else 'CONTRADICT'}: {pair.claim!r}")
        run.rows.append(row)
    if scored:
        result = accuracy_at(scored, 0.5)
        run.tally.add_value("claim_scorer_balanced_accuracy", result.balanced_accuracy,
                            len(scored))
        run.extra["majority_baseline"] = round(result.majority_baseline, 4)
    if baseline:
        run.tally.add_value("lexical_balanced_accuracy",
                            accuracy_at(baseline, 0.5).balanced_accuracy, len(baseline))
    if hasattr(scorer, "verdicts"):
        run.extra["verdicts"] = dict(scorer.verdicts)
    return run


def _spread(items: Sequence[Any], limit: int | None) -> list[Any]:
    if limit is None or limit >= len(items):
        return list(items)
    step = len(items) / limit
    return [items[int(i * step)] for i in range(limit)]
