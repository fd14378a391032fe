"""Where a local hybrid search spends its time at scale, and what two choices save, measured
in one process against their baselines:

1. the lexical leg on an all-public index: the bare BM25 disjunction (what `LexicalIndex`
   runs) vs the same query inside the tenant filter (the baseline; scores checked equal);
2. the lexical leg's query without English stop words (what `LexicalIndex` runs) vs every
   word of the question (the baseline, query semantics v1), and what it does to quality:
   lexical-only nDCG@10 and recall@10 on SciFact's 300 test claims over its 5,183 abstracts;
3. the whole `search()` with its two legs in parallel (`LocalIndex`, from
   `PARALLEL_MIN_ROWS` rows) vs one after the other (the baseline).

Data as `ann_scale.py` builds it (SciFact sentence windows, 384-d hashing vectors, an HNSW
snapshot); queries are 200 SciFact claims, alternated between the variants.

    .venv/bin/python benchmarks/search_legs.py --chunks 100000
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import tantivy
from ann_scale import K, synthesise
from backends_100k import hashing_vectors, queries
from scifact import data_dir, ndcg_at_k, recall_at_k, test_queries

from citadel.retrieval import ann
from citadel.retrieval.backends.local import PARALLEL_MIN_ROWS, LocalBackend, LocalIndex
from citadel.retrieval.lexical import _QUERY_TERM, PUBLIC, LexicalIndex, build_index, query_terms


def filtered_lexical(index: LocalIndex, text: str, k: int) -> dict[int, float]:
    """The baseline: the query inside the tenant filter, as every search ran it before."""
    lexical = index._lexical
    query = tantivy.Query.boolean_query([
        (tantivy.Occur.Must, lexical.parse(query_terms(text))),
        (tantivy.Occur.Must, tantivy.Query.term_set_query(lexical._schema, "tenant", [PUBLIC]))])
    return {row: float(score) for row, score in lexical.top(query, k).items()}


def every_term_lexical(lexical: LexicalIndex, text: str, k: int) -> dict[int, float]:
    """The baseline query of semantics v1: every word of the text, stop words included."""
    return lexical.top(lexical.parse([t.lower() for t in _QUERY_TERM.findall(text)]), k)


def scifact_quality(work: Path) -> dict[str, tuple[float, float]]:
    """Lexical-only document nDCG@10 and recall@10 on SciFact, every word vs no stop words."""
    with (data_dir() / "corpus.jsonl").open() as fh:
        docs = [json.loads(line) for line in fh]
    build_index(work / "scifact", ((i, f"{d['title']}\n{d['text']}", None, "scifact")
                                   for i, d in enumerate(docs)))
    lexical = LexicalIndex(work / "scifact")
    claims, qrels = test_queries()
    out = {}
    for name, search in (("every word", lambda t: every_term_lexical(lexical, t, 10)),
                         ("no stop words", lambda t: lexical.search(t, 10))):
        ndcg, recall = [], []
        for qid, text in claims.items():
            found = search(text)
            ranked = [docs[row]["_id"] for row in sorted(found, key=found.get, reverse=True)]
            ndcg.append(ndcg_at_k(ranked, qrels[qid]))
            recall.append(recall_at_k(ranked, qrels[qid]))
        out[name] = (statistics.mean(ndcg), statistics.mean(recall))
    return out


def p50(xs: list[float]) -> float:
    return round(statistics.median(xs) * 1000, 2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    if args.chunks < PARALLEL_MIN_ROWS:
        ap.error(f"--chunks must be at least {PARALLEL_MIN_ROWS:,}: below that the legs of a "
                 "search do not run in parallel, so there is nothing to compare")
    documents, chunks, texts = synthesise(args.chunks)
    vectors = hashing_vectors(texts)
    qs = queries(200)
    qvecs = hashing_vectors(qs)
    work = Path(tempfile.mkdtemp(prefix="citadel-legs-"))
    try:
        LocalBackend(work, ann_min_chunks=1).write_snapshot("kb", documents, chunks, vectors,
                                                            texts)
        del documents, chunks, texts
        index = LocalIndex(work / "kb", "kb", 0.5, 50)
        sequential = LocalIndex(work / "kb", "kb", 0.5, 50)
        sequential._legs.shutdown()
        sequential._legs = None
        for text, vec in list(zip(qs, qvecs, strict=True))[:10]:
            index.search(text, vec, K)
            sequential.search(text, vec, K)
        times: dict[str, list[float]] = {k: [] for k in ("filtered", "bare", "seq", "par",
                                                         "every")}
        equal = 0
        load = os.getloadavg()[0]
        for _ in range(args.rounds):
            for text, vec in zip(qs, qvecs, strict=True):
                t0 = time.perf_counter()
                a = filtered_lexical(index, text, 50)
                t1 = time.perf_counter()
                b = index._lexical.search(text, 50)
                t2 = time.perf_counter()
                sequential.search(text, vec, K)
                t3 = time.perf_counter()
                index.search(text, vec, K)
                t4 = time.perf_counter()
                every_term_lexical(index._lexical, text, 50)
                t5 = time.perf_counter()
                equal += a == b
                for key, dt in zip(times, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4),
                                   strict=True):
                    times[key].append(dt)
        index.close()
        sequential.close()
        quality = scifact_quality(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    n = args.rounds * len(qs)
    print(f"{args.chunks:,} chunks, {len(qs)} queries x {args.rounds} rounds, "
          f"{os.cpu_count()} CPUs, 1-min load {load:.1f} at start, "
          f"{os.getloadavg()[0]:.1f} at end; ANN {ann.AnnParams().fingerprint()}\n")
    print("| measure | baseline p50 (ms) | now p50 (ms) | ratio |")
    print("|---|---|---|---|")
    for name, base, now in (("lexical leg (filtered vs bare)", "filtered", "bare"),
                            ("lexical leg (every word vs no stop words)", "every", "bare"),
                            ("hybrid search() (sequential vs parallel legs)", "seq", "par")):
        print(f"| {name} | {p50(times[base])} | {p50(times[now])} | "
              f"{statistics.median(times[base]) / statistics.median(times[now]):.2f}x |")
    print(f"\nlexical results identical (rows and scores): {equal}/{n}")
    print("\nSciFact, lexical only (300 test claims, 5,183 abstracts, document level):")
    for name, (ndcg, recall) in quality.items():
        print(f"  {name:14s} nDCG@10 {ndcg:.4f}  recall@10 {recall:.4f}")


if __name__ == "__main__":
    main()
