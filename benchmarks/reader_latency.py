"""What the evidence reader costs per answer: the judgement stage with the reader reading N
statements, against the same stage reading none (the lexical features alone), in one
process, the configurations taking turns question by question so that a noisy neighbour
weighs on all of them alike.

    .venv/bin/python benchmarks/reader_latency.py [--questions 200] [--sentences 0,4,8,12,16]

Knowledge bases: the demo KB with its eval questions, and the SQuAD 2.0 dev half with a
spread of its questions (MiniLM embeddings, default settings). Reported per configuration:
the `judge` stage's p50 / p95 (from each answer's trace), the whole answer's p50, and the
p50 ratio to N = 0. Writes benchmarks/results/reader_latency.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from citadel.answering.judgement import Judge  # noqa: E402
from citadel.answering.reader import Reader  # noqa: E402
from citadel.config import Settings  # noqa: E402
from citadel.engine import Engine  # noqa: E402
from citadel.evaluation.datasets import load_qa  # noqa: E402
from citadel.evaluation.squad2 import find_squad2, load_squad2, spread, write_corpus  # noqa: E402
from citadel.ingest.pipeline import ingest  # noqa: E402
from citadel.retrieval.embedders import get_embedder  # noqa: E402
from citadel.text.analysis import Analyser  # noqa: E402


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def measure(settings: Settings, embedder, analyser: Analyser, reader: Reader,
            questions: list[str], counts: list[int]) -> dict[int, dict[str, float]]:
    engines = {n: Engine.open(settings, embedder=embedder,
                              judge=Judge(analyser, reader=reader, reader_sentences=n))
               for n in counts}
    judge: dict[int, list[float]] = {n: [] for n in counts}
    total: dict[int, list[float]] = {n: [] for n in counts}
    try:
        for e in engines.values():
            e.answer("warm up the caches")
        for q in questions:
            for n, e in engines.items():
                a = e.answer(q)
                if "judge" in a.trace.latencies_ms:
                    judge[n].append(a.trace.latencies_ms["judge"])
                    total[n].append(a.trace.latencies_ms["total"])
    finally:
        for e in engines.values():
            e.close()
    base = pct(judge[counts[0]], 0.5)
    return {n: {"judge_p50_ms": round(pct(judge[n], 0.5), 2),
                "judge_p95_ms": round(pct(judge[n], 0.95), 2),
                "answer_p50_ms": round(pct(total[n], 0.5), 2),
                "judge_p50_ratio_to_first": round(pct(judge[n], 0.5) / base, 2),
                "answers": len(judge[n])} for n in counts}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=200, help="SQuAD questions asked")
    parser.add_argument("--sentences", default="0,4,8,12,16")
    parser.add_argument("--threads", type=int, default=0, help="reader threads (0: per core)")
    args = parser.parse_args()
    counts = [int(n) for n in args.sentences.split(",")]
    load_start = os.getloadavg()[0]
    embedder = get_embedder("minilm")
    analyser = Analyser()
    analyser.load()
    reader = Reader(threads=args.threads)
    reader.load()
    work = Path(tempfile.mkdtemp(prefix="citadel-bench-"))
    results: dict[str, object] = {"reader": reader.version, "threads": args.threads}
    try:
        settings = Settings(home=work / "demo")
        ingest([ROOT / "examples" / "support-kb"], settings, embedder=embedder,
               analyser=analyser, progress=False)
        demo = [r.question for r in load_qa(ROOT / "eval" / "qa.jsonl").rows]
        results["demo"] = measure(settings, embedder, analyser, reader, demo, counts)
        path = find_squad2(ROOT)
        if path is not None:
            data = load_squad2(path)
            settings = Settings(home=work / "squad2")
            corpus = write_corpus(list(data.paragraphs.values()), work / "squad2-corpus")
            ingest([corpus], settings, embedder=embedder, analyser=analyser, progress=False)
            qs = [q.text for q in spread(list(data.questions), args.questions)]
            results["squad2"] = measure(settings, embedder, analyser, reader, qs, counts)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    results["load_start"], results["load_end"] = load_start, os.getloadavg()[0]
    print("| suite | statements read | judge p50 ms | judge p95 ms | answer p50 ms | "
          "p50 ratio to N=" + str(counts[0]) + " |\n|---|---|---|---|---|---|")
    for suite in ("demo", "squad2"):
        for n, r in (results.get(suite) or {}).items():
            print(f"| {suite} | {n} | {r['judge_p50_ms']} | {r['judge_p95_ms']} | "
                  f"{r['answer_p50_ms']} | {r['judge_p50_ratio_to_first']} |")
    out = ROOT / "benchmarks" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "reader_latency.json").write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
