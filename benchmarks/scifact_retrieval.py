"""Foundation benchmark on SciFact: ingest throughput, Engine.answer latency (warm), and
nDCG@10 / recall@10 of dense-only, lexical-only and hybrid retrieval, in one process.

    .venv/bin/python benchmarks/scifact_retrieval.py [--home DIR] [--limit N]

Reuses the snapshot in --home if it is already built (ingest figures are then skipped).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scifact import docs_from_chunks, ndcg_at_k, recall_at_k, test_queries, write_corpus

from citadel.config import Settings
from citadel.engine import Engine
from citadel.ingest.pipeline import ingest
from citadel.retrieval.backends import get_backend


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--home", type=Path, default=Path(tempfile.gettempdir()) / "citadel-scifact")
    ap.add_argument("--limit", type=int, default=None, help="only the first N abstracts")
    args = ap.parse_args()

    settings = Settings(home=args.home)
    corpus_dir = args.home / "corpus"
    n_docs = write_corpus(corpus_dir, args.limit)
    t0 = time.perf_counter()
    report = ingest([corpus_dir], settings, progress=True)
    seconds = time.perf_counter() - t0
    print(f"\ncorpus: {n_docs} abstracts -> {report.chunks} chunks, snapshot {report.snapshot_id}")
    if report.reused:
        print("ingest: reused an existing snapshot (delete --home to measure ingest)")
    else:
        print(f"ingest: {seconds:.1f} s, {report.chunks / seconds:.1f} chunks/s "
              f"({report.documents / seconds:.1f} docs/s), embedder {settings.embedder}")

    queries, qrels = test_queries()
    engine = Engine.open(settings)
    backend = get_backend(settings)
    vectors = {qid: engine.embedder.embed_query(q) for qid, q in queries.items()}

    print(f"\nretrieval on {len(queries)} test queries (document level, best chunk per doc)")
    # "pool recall@100": the fused pool is at most 2 x `candidates` chunks, the same set for
    # every weight, so this column shows what the pool can reach, not the ranking.
    print("| retrieval | dense_weight | nDCG@10 | recall@10 | pool recall@100 |")
    print("|---|---|---|---|---|")
    for name, weight in (("dense only", 1.0), ("lexical only", 0.0), ("hybrid", 0.5),
                         ("hybrid", 0.3), ("hybrid", 0.7)):
        index = backend.open(report.snapshot_id, weight, settings.candidates)
        ndcg, r10, r100 = [], [], []
        for qid, q in queries.items():
            ranked = index.search(q, vectors[qid], 200)
            docs = docs_from_chunks([r.chunk.document_id for r in ranked])
            ndcg.append(ndcg_at_k(docs, qrels[qid]))
            r10.append(recall_at_k(docs, qrels[qid], 10))
            r100.append(recall_at_k(docs, qrels[qid], 100))
        index.close()
        print(f"| {name} | {weight} | {statistics.mean(ndcg):.3f} | {statistics.mean(r10):.3f}"
              f" | {statistics.mean(r100):.3f} |")

    for q in list(queries.values())[:10]:  # warm-up
        engine.answer(q)
    latencies = []
    for q in queries.values():
        t = time.perf_counter()
        engine.answer(q)
        latencies.append((time.perf_counter() - t) * 1000)
    latencies.sort()
    p50 = latencies[len(latencies) // 2]
    p95 = latencies[int(len(latencies) * 0.95)]
    print(f"\nEngine.answer warm latency over {len(latencies)} queries: p50 {p50:.1f} ms, "
          f"p95 {p95:.1f} ms (includes query embedding)")


if __name__ == "__main__":
    main()
