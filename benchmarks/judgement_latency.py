"""Cost of the judgement stage: per-answer latency, and what analysis adds to ingest.

    .venv/bin/python benchmarks/judgement_latency.py [--repeat 3] [--questions 200]

1. **Ingest**: the demo knowledge base ingested from scratch (fresh home and embedding
   cache, MiniLM) with the analysis step and without it (an analyser that returns empty
   analyses), alternately, `--repeat` times each, in this one process. Reported: median
   seconds of each and their ratio (the ingest slowdown analysis causes).
2. **Judgement per answer**: `Engine.answer` over the demo eval questions and a spread of
   SQuAD 2.0 questions against their knowledge bases; the trace's `judge` stage (question
   parse + features + model over every context sentence), p50 and p95, next to the whole
   answer's p50 for scale, and the question's parse alone (spaCy), p50.

Prints a Markdown table; writes benchmarks/results/judgement_latency.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from citadel.config import Settings  # noqa: E402
from citadel.engine import Engine  # noqa: E402
from citadel.evaluation.datasets import load_qa  # noqa: E402
from citadel.evaluation.squad2 import find_squad2, load_squad2, spread, write_corpus  # noqa: E402
from citadel.ingest.pipeline import ingest  # noqa: E402
from citadel.records import ChunkAnalysis  # noqa: E402
from citadel.retrieval.embedders import get_embedder  # noqa: E402
from citadel.text.analysis import Analyser  # noqa: E402


class NoAnalysis(Analyser):
    """The baseline: the ingest pipeline with its analysis step doing nothing."""

    def analyse_chunks(self, contents):
        return [ChunkAnalysis() for _ in contents]


def load() -> float:
    return os.getloadavg()[0]


def time_ingest(kb: Path, analyser: Analyser, embedder) -> float:
    home = Path(tempfile.mkdtemp(prefix="citadel-bench-"))
    try:
        t0 = time.perf_counter()
        ingest([kb], Settings(home=home), embedder=embedder, analyser=analyser, progress=False)
        return time.perf_counter() - t0
    finally:
        shutil.rmtree(home, ignore_errors=True)


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def answer_latencies(engine: Engine, questions: list[str]) -> tuple[list[float], list[float]]:
    judge, total = [], []
    for q in questions:
        a = engine.answer(q)
        if "judge" in a.trace.latencies_ms:
            judge.append(a.trace.latencies_ms["judge"])
            total.append(a.trace.latencies_ms["total"])
    return judge, total


def parse_latencies(engine: Engine, questions: list[str]) -> list[float]:
    """The question's spaCy parse alone: the part of the stage that is not judging."""
    out = []
    for q in questions:
        t0 = time.perf_counter()
        engine.judge.analyser.parse(q)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--questions", type=int, default=200, help="SQuAD questions asked")
    args = parser.parse_args()
    start_load = load()
    embedder = get_embedder("minilm")
    analyser = Analyser()
    analyser.load()  # model load is a one-off per process, not per ingest
    kb = ROOT / "examples" / "support-kb"
    with_analysis, without = [], []
    for _ in range(args.repeat):
        without.append(time_ingest(kb, NoAnalysis(), embedder))
        with_analysis.append(time_ingest(kb, analyser, embedder))
    rows = {"ingest_demo_kb_s_without_analysis": statistics.median(without),
            "ingest_demo_kb_s_with_analysis": statistics.median(with_analysis)}
    rows["ingest_slowdown_ratio"] = (rows["ingest_demo_kb_s_with_analysis"]
                                     / rows["ingest_demo_kb_s_without_analysis"])

    work = Path(tempfile.mkdtemp(prefix="citadel-bench-"))
    try:
        settings = Settings(home=work / "demo")
        ingest([kb], settings, embedder=embedder, analyser=analyser, progress=False)
        engine = Engine.open(settings, embedder=embedder)
        engine.answer("warm up")
        demo_q = [r.question for r in load_qa(ROOT / "eval" / "qa.jsonl").rows]
        judge, total = answer_latencies(engine, demo_q)
        parse = parse_latencies(engine, demo_q)
        engine.close()
        rows.update(demo_judge_p50_ms=pct(judge, 0.5), demo_judge_p95_ms=pct(judge, 0.95),
                    demo_question_parse_p50_ms=pct(parse, 0.5),
                    demo_answer_p50_ms=pct(total, 0.5), demo_answers=len(judge))
        path = find_squad2(ROOT)
        if path is not None:
            data = load_squad2(path)
            settings = Settings(home=work / "squad2")
            corpus = write_corpus(list(data.paragraphs.values()), work / "squad2-corpus")
            ingest([corpus], settings, embedder=embedder, analyser=analyser, progress=False)
            engine = Engine.open(settings, embedder=embedder)
            engine.answer("warm up")
            qs = [q.text for q in spread(list(data.questions), args.questions)]
            judge, total = answer_latencies(engine, qs)
            parse = parse_latencies(engine, qs)
            engine.close()
            rows.update(squad2_judge_p50_ms=pct(judge, 0.5),
                        squad2_judge_p95_ms=pct(judge, 0.95),
                        squad2_question_parse_p50_ms=pct(parse, 0.5),
                        squad2_answer_p50_ms=pct(total, 0.5), squad2_answers=len(judge))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows.update(load_start=start_load, load_end=load())
    print("| measure | value |\n|---|---|")
    for k, v in rows.items():
        print(f"| {k} | {v:.3f} |" if isinstance(v, float) else f"| {k} | {v} |")
    out = ROOT / "benchmarks" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "judgement_latency.json").write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
