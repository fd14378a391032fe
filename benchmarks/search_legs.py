"""Where a local hybrid search spends its time at scale, and what two choices save, measured
in one process against their baselines:

1. the lexical leg on an all-public index: the bare BM25 disjunction (what `LexicalIndex`
   runs) vs the same query inside the tenant filter (the baseline; scores checked equal);
2. the whole `search()` with its two legs in parallel (`LocalIndex`, from
   `PARALLEL_MIN_ROWS` rows) vs one after the other (the baseline).

Data as `ann_scale.py` builds it (SciFact sentence windows, 384-d hashing vectors, an HNSW
snapshot); queries are 200 SciFact claims, alternated between the variants.

    .venv/bin/python benchmarks/search_legs.py --chunks 100000
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import tantivy
from ann_scale import DIM, K, synthesise
from backends_100k import queries

from citadel.retrieval import ann
from citadel.retrieval.backends.local import LocalBackend, LocalIndex
from citadel.retrieval.embedders.hashing import HashingEmbedder
from citadel.retrieval.lexical import _QUERY_TERM, PUBLIC


def filtered_lexical(index: LocalIndex, text: str, k: int) -> dict[int, float]:
    """The baseline: the query inside the tenant filter, as every search ran it before."""
    lexical = index._lexical
    terms = [t.lower() for t in _QUERY_TERM.findall(text)]
    query = lexical._index.parse_query(" ".join(f'"{t}"' for t in terms), ["body"])
    query = tantivy.Query.boolean_query([
        (tantivy.Occur.Must, query),
        (tantivy.Occur.Must, tantivy.Query.term_set_query(lexical._schema, "tenant", [PUBLIC]))])
    searcher = lexical._index.searcher()
    return {searcher.doc(a)["row"][0]: float(s) for s, a in searcher.search(query, limit=k).hits}


def p50(xs: list[float]) -> float:
    return round(statistics.median(xs) * 1000, 2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    documents, chunks, texts = synthesise(args.chunks)
    embedder = HashingEmbedder(DIM)
    vectors = np.vstack([embedder.embed(texts[i : i + 8192])
                         for i in range(0, len(texts), 8192)])
    qs = queries(200)
    qvecs = embedder.embed(qs)
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
        times: dict[str, list[float]] = {k: [] for k in ("filtered", "bare", "seq", "par")}
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
                equal += a == b
                for key, dt in zip(times, (t1 - t0, t2 - t1, t3 - t2, t4 - t3), strict=True):
                    times[key].append(dt)
        index.close()
        sequential.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    n = args.rounds * len(qs)
    print(f"{args.chunks:,} chunks, {len(qs)} queries x {args.rounds} rounds, "
          f"{os.cpu_count()} CPUs, 1-min load {load:.1f} at start, "
          f"{os.getloadavg()[0]:.1f} at end; ANN {ann.AnnParams().fingerprint()}\n")
    print("| measure | baseline p50 (ms) | now p50 (ms) | ratio |")
    print("|---|---|---|---|")
    for name, base, now in (("lexical leg (filtered vs bare)", "filtered", "bare"),
                            ("hybrid search() (sequential vs parallel legs)", "seq", "par")):
        print(f"| {name} | {p50(times[base])} | {p50(times[now])} | "
              f"{statistics.median(times[base]) / statistics.median(times[now]):.2f}x |")
    print(f"\nlexical results identical (rows and scores): {equal}/{n}")


if __name__ == "__main__":
    main()
