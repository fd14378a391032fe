"""Does the lexical reranker help? SciFact nDCG@10 and demo-KB recall, with and without it.

    .venv/bin/python benchmarks/scifact_corpus.py        # once: builds the SciFact home (slow)
    .venv/bin/python benchmarks/rerank_quality.py        # this report

SciFact (5,183 abstracts, one document each): the blend of the lexical reranker is chosen on
the 505 *train* claims that carry evidence documents, then reported on the 300 test claims
(qrels/test.tsv), so the test set never picks a parameter. Document ranking = the order in
which a document's first chunk appears. Demo KB (examples/support-kb, 32 questions in
benchmarks/demo_questions.jsonl): a chunk is relevant when it contains the expected answer
text; we report recall@1/@4/@8 of the ranked list, recall of the generator's context (the
4 chunks build_context picks) and the share of answers whose citation quotes the answer.
Both use the default configuration (MiniLM + BM25, weighted fusion, rerank_depth 20, top_k 8).
Writes benchmarks/results/rerank_quality.json.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from scifact import data_dir  # noqa: E402
from scifact_corpus import DEFAULT_HOME, build_home  # noqa: E402

from citadel.answering.context import build_context  # noqa: E402
from citadel.answering.generators.extractive import ExtractiveGenerator  # noqa: E402
from citadel.config import Settings  # noqa: E402
from citadel.engine import Engine  # noqa: E402
from citadel.ingest.pipeline import ingest  # noqa: E402
from citadel.records import RankedChunk  # noqa: E402
from citadel.retrieval.rerankers.lexical import LexicalReranker  # noqa: E402
from citadel.text.quotes import normalize  # noqa: E402

BLENDS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.7, 1.0)  # weight of the lexical signals
Rerank = Callable[[str, list[RankedChunk]], list[RankedChunk]]


def ndcg_at_10(ranking: Sequence[str], relevant: set[str]) -> float:
    dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(ranking[:10]) if d in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), 10)))
    return dcg / ideal if ideal else 0.0


def paired_difference(a: Sequence[float], b: Sequence[float], rounds: int = 2000) -> dict:
    """Mean of a - b per query, a 95% paired bootstrap interval, and wins / losses / ties."""
    rng = random.Random(0)
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    means = sorted(statistics.fmean(rng.choices(diffs, k=len(diffs))) for _ in range(rounds))
    return {"mean": statistics.fmean(diffs), "ci95": (means[int(0.025 * rounds)],
                                                      means[int(0.975 * rounds)]),
            "wins": sum(d > 1e-9 for d in diffs), "losses": sum(d < -1e-9 for d in diffs),
            "ties": sum(abs(d) <= 1e-9 for d in diffs)}


def doc_ranking(ranked: Sequence[RankedChunk]) -> list[str]:
    seen: dict[str, None] = {}
    for r in ranked:
        seen.setdefault(r.chunk.document_id, None)
    return list(seen)


def reranked(rerank: Rerank | None, question: str, candidates: list[RankedChunk],
             depth: int) -> list[RankedChunk]:
    """What the engine does: rerank the best `depth`, the rest keep their fused order."""
    if rerank is None:
        return candidates
    return rerank(question, candidates[:depth]) + candidates[depth:]


def scifact_queries() -> tuple[dict[str, tuple[str, set[str]]], dict[str, tuple[str, set[str]]]]:
    root = data_dir()
    qrels: dict[str, set[str]] = {}
    for line in (root / "qrels" / "test.tsv").read_text().splitlines()[1:]:
        qid, doc, score = line.split("\t")
        if int(score) > 0:
            qrels.setdefault(qid, set()).add(doc)
    test, dev = {}, {}
    for line in (root / "queries.jsonl").read_text().splitlines():
        q = json.loads(line)
        if q["_id"] in qrels:
            test[q["_id"]] = (q["text"], qrels[q["_id"]])
        elif q.get("metadata"):
            dev[q["_id"]] = (q["text"], set(q["metadata"]))
    return dev, test


def scifact(home: Path, depths: Sequence[int]) -> dict:
    if not (home / "catalog.sqlite").exists() and not any(home.glob("*")):
        print("building the SciFact home first (minutes)...", flush=True)
    build_home(home)
    engine = Engine.open(Settings(home=home, log_requests=False))
    dev, test = scifact_queries()
    pool = max(depths)
    t0 = time.perf_counter()
    cands = {split: {qid: engine.retrieve(text, pool, None, None) for qid, (text, _) in qs.items()}
             for split, qs in (("dev", dev), ("test", test))}
    print(f"retrieved {len(dev) + len(test)} claims in {time.perf_counter() - t0:.0f}s",
          flush=True)

    def per_query(split: str, rerank: Rerank | None, depth: int) -> list[float]:
        qs = dev if split == "dev" else test
        return [ndcg_at_10(doc_ranking(reranked(rerank, text, cands[split][qid], depth)), rel)
                for qid, (text, rel) in qs.items()]

    out: dict = {"dev_claims": len(dev), "test_claims": len(test), "depths": {}}
    scores: dict[tuple[int, str], dict[str, list[float]]] = {}
    for depth in depths:
        variants: dict[str, Rerank | None] = {"none": None}
        variants.update({f"lexical blend={b}": LexicalReranker(b).rerank for b in BLENDS})
        rows = {}
        for name, rr in variants.items():
            scores[depth, name] = {s: per_query(s, rr, depth) for s in ("dev", "test")}
            rows[name] = {s: statistics.fmean(v) for s, v in scores[depth, name].items()}
        out["depths"][depth] = rows
    # The variant is chosen on dev only (none included), at the engine's default depth.
    rows = out["depths"][depths[0]]
    chosen = max(rows, key=lambda n: rows[n]["dev"])
    best_lexical = max((n for n in rows if n != "none"), key=lambda n: rows[n]["dev"])
    out["chosen_on_dev"] = chosen
    out["best_lexical_on_dev"] = best_lexical
    out["test_difference"] = paired_difference(scores[depths[0], best_lexical]["test"],
                                               scores[depths[0], "none"]["test"])
    # Latency of the reranker itself on the test claims, at the engine's default depth.
    rr = LexicalReranker()
    times = []
    for qid, (text, _) in test.items():
        t = time.perf_counter()
        rr.rerank(text, cands["test"][qid][: depths[0]])
        times.append((time.perf_counter() - t) * 1000)
    out["rerank_ms_p50"] = statistics.median(times)
    out["rerank_ms_p95"] = sorted(times)[int(0.95 * len(times))]
    engine.close()
    return out


def demo(home: Path, blends: Sequence[float]) -> dict:
    settings = Settings(home=home, log_requests=False)
    ingest([ROOT / "examples" / "support-kb"], settings, progress=False)
    base = Engine.open(settings)
    questions = [json.loads(line) for line in
                 (ROOT / "benchmarks" / "demo_questions.jsonl").read_text().splitlines()]

    def has_answer(text: str, answer: str) -> bool:
        return normalize(answer) in normalize(text)

    variants: dict[str, LexicalReranker | None] = {"none": None}
    variants.update({f"lexical blend={b}": LexicalReranker(b) for b in blends})
    out = {}
    for name, reranker in variants.items():
        engine = Engine(settings, base.index, base.embedder, ExtractiveGenerator(
            settings.support_threshold, settings.max_answer_sentences), reranker=reranker)
        hits = {"recall@1": 0, "recall@4": 0, "recall@8": 0, "context_recall": 0,
                "cited_answer": 0, "grounded": 0}
        for q in questions:
            cands = engine.retrieve(q["question"], settings.rerank_depth, None, None)
            ranked = reranked(reranker.rerank if reranker else None, q["question"], cands,
                              settings.rerank_depth)[: settings.top_k]
            first = next((i for i, r in enumerate(ranked)
                          if has_answer(r.chunk.content, q["answer"])), None)
            for k in (1, 4, 8):
                hits[f"recall@{k}"] += first is not None and first < k
            context = build_context(ranked, settings.max_context,
                                    authority_weight=settings.authority_weight,
                                    max_per_document=settings.max_per_document)
            hits["context_recall"] += any(has_answer(b.chunk.content, q["answer"])
                                          for b in context.blocks)
            answer = engine.answer(q["question"])
            hits["grounded"] += answer.grounded
            hits["cited_answer"] += any(has_answer(c.quote, q["answer"])
                                        for c in answer.citations)
        out[name] = {k: v / len(questions) for k, v in hits.items()}
    base.close()
    return {"questions": len(questions), "variants": out}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scifact-home", type=Path, default=DEFAULT_HOME)
    parser.add_argument("--demo-home", type=Path,
                        default=ROOT / "benchmarks" / "results" / "demo-home")
    parser.add_argument("--skip-scifact", action="store_true")
    parser.add_argument("--out", type=Path,
                        default=ROOT / "benchmarks" / "results" / "rerank_quality.json")
    args = parser.parse_args()
    result: dict = {}
    if not args.skip_scifact:
        sf = scifact(args.scifact_home, depths=(20, 50))
        result["scifact"] = sf
        print(f"\nSciFact nDCG@10 (dev: {sf['dev_claims']} train claims with evidence, used to "
              f"choose the blend; test: {sf['test_claims']} claims)")
        for depth, rows in sf["depths"].items():
            print(f"  reranking the top {depth} fused chunks")
            for name, r in rows.items():
                print(f"    {name:<22} dev {r['dev']:.4f}   test {r['test']:.4f}")
        rows = sf["depths"][20]
        best, d = sf["best_lexical_on_dev"], sf["test_difference"]
        print(f"  best on dev (depth 20, none included): {sf['chosen_on_dev']}")
        print(f"  best lexical on dev: {best}: test {rows[best]['test']:.4f} vs none "
              f"{rows['none']['test']:.4f}: {d['mean']:+.4f} per claim, 95% paired bootstrap "
              f"interval [{d['ci95'][0]:+.4f}, {d['ci95'][1]:+.4f}]; better on {d['wins']}, "
              f"worse on {d['losses']}, equal on {d['ties']} claims")
        print(f"  lexical rerank latency (20 candidates): p50 {sf['rerank_ms_p50']:.2f} ms, "
              f"p95 {sf['rerank_ms_p95']:.2f} ms")
    chosen = result.get("scifact", {}).get("best_lexical_on_dev", "lexical blend=0.4")
    blends = sorted({0.4, float(chosen.split("=")[1])})
    dm = demo(args.demo_home, blends)
    result["demo"] = dm
    print(f"\nDemo KB ({dm['questions']} questions; a chunk is relevant if it holds the answer)")
    cols = ("recall@1", "recall@4", "recall@8", "context_recall", "cited_answer", "grounded")
    print(f"  {'variant':<22}" + "".join(f" {c:>14}" for c in cols))
    for name, r in dm["variants"].items():
        print(f"  {name:<22}" + "".join(f" {r[c]:>14.3f}" for c in cols))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
