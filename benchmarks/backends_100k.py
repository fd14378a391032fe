"""Hybrid retrieval latency and ingest throughput of every backend, on the same 100k chunks,
in one run.

Data: SciFact abstracts (`../shared/data/scifact/corpus.jsonl`, 5,183 documents, 45,952
sentences). Every window of 2, 3 and 4 consecutive sentences of an abstract (stride 1) is a
chunk, which gives 106,758 chunks; the first `--chunks` (default 100,000) in corpus order are
kept, with the abstract as the document and exact character offsets into it. Index text is
"title\\nchunk", as ingestion builds it.

Vectors: the deterministic hashing embedder at 384 dimensions (MiniLM's width), computed once
and given to every backend; embedding 100k passages with MiniLM would take ~30 min on two
cores and is the same cost for every backend. Queries: SciFact test claims (qrels/test.tsv),
their vectors also precomputed, so latency is the backend's `search()` alone (k=8,
candidates=50), measured after a short warm-up.

Ingest = `Backend.write_snapshot` (storage + dense index + lexical index), in chunks/s;
open = opening the snapshot for search. "This process's CPU" is the benchmark process's CPU
time per query (all its threads): on a machine shared with other work it shows what a query
costs, where wall time also counts waiting for a core; for PostgreSQL the work is in the
server, so it is only the client's share. Qdrant runs embedded on disk (`path=`): no server
can be installed here. PostgreSQL is the server from scripts/postgres.sh (a fresh database
is created and dropped).

    .venv/bin/python benchmarks/backends_100k.py            # all backends, ~15-20 min
    .venv/bin/python benchmarks/backends_100k.py --backends local --chunks 100000
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import shutil
import statistics
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np
from scifact import data_dir

from citadel.records import Chunk, Document
from citadel.retrieval.backends.base import Backend
from citadel.retrieval.embedders.hashing import HashingEmbedder

ROOT = Path(__file__).resolve().parents[1]
WINDOWS = (2, 3, 4)
DIM = 384
K = 8
CANDIDATES = 50


def synthesise(limit: int) -> tuple[list[Document], list[Chunk], list[str]]:
    documents: list[Document] = []
    chunks: list[Chunk] = []
    with (data_dir() / "corpus.jsonl").open() as fh:
        for line in fh:
            row = json.loads(line)
            text = row["text"]
            spans, cursor = [], 0
            for sentence in row["sentences"]:
                start = text.find(sentence, cursor)
                if start < 0:
                    break
                spans.append((start, start + len(sentence)))
                cursor = start + len(sentence)
            else:
                doc_id = f"scifact-{row['_id']}"
                title = row["title"] or doc_id
                doc_chunks = []
                for width in WINDOWS:
                    for i in range(len(spans) - width + 1):
                        start, end = spans[i][0], spans[i + width - 1][1]
                        content = text[start:end]
                        doc_chunks.append(Chunk(
                            chunk_id=f"{doc_id}#w{width}s{i}", document_id=doc_id,
                            source=f"scifact/{row['_id']}", title=title, section=title,
                            category="scifact", content=content, start=start, end=end,
                            content_sha256=hashlib.sha256(content.encode()).hexdigest()))
                if doc_chunks:
                    documents.append(Document(
                        document_id=doc_id, source=f"scifact/{row['_id']}", title=title,
                        format="text", text=text, category="scifact",
                        content_sha256=hashlib.sha256(text.encode()).hexdigest()))
                    chunks.extend(doc_chunks)
            if len(chunks) >= limit:
                break
    chunks = chunks[:limit]
    kept = {c.document_id for c in chunks}
    documents = [d for d in documents if d.document_id in kept]
    texts = [f"{c.title}\n{c.content}" for c in chunks]
    return documents, chunks, texts


def hashing_vectors(texts: list[str]) -> np.ndarray:
    """The deterministic hashing embedder's vectors of `texts` at DIM (MiniLM's width), in
    batches so a million texts do not make one huge token list."""
    embedder = HashingEmbedder(DIM)
    return np.vstack([embedder.embed(texts[i : i + 8192]) for i in range(0, len(texts), 8192)])


def queries(n: int) -> list[str]:
    wanted = set()
    with (data_dir() / "qrels" / "test.tsv").open() as fh:
        next(fh)
        wanted = {line.split("\t")[0] for line in fh}
    out = []
    with (data_dir() / "queries.jsonl").open() as fh:
        for line in fh:
            row = json.loads(line)
            if row["_id"] in wanted:
                out.append(row["text"])
    return out[:n]


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def run_backend(name: str, backend: Backend, data, qs, qvecs, warmup: int = 3) -> dict:
    documents, chunks, texts, vectors = data
    snapshot_id = "kb-bench" + uuid.uuid4().hex[:8]
    t0 = time.perf_counter()
    backend.write_snapshot(snapshot_id, documents, chunks, vectors, texts)
    write_s = time.perf_counter() - t0
    gc.collect()
    t0 = time.perf_counter()
    index = backend.open(snapshot_id, 0.5, CANDIDATES)
    for i in range(min(warmup, len(qs))):
        index.search(qs[i], qvecs[i], K)
    open_s = time.perf_counter() - t0
    latencies, cpu, tops = [], [], []
    for text, vec in zip(qs, qvecs, strict=True):
        t, c = time.perf_counter(), time.process_time()
        ranked = index.search(text, vec, K)
        latencies.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
        tops.append([r.chunk_id for r in ranked])
    counts = index.count()
    index.close()
    return {"backend": name, "chunks": len(chunks), "write_s": round(write_s, 2),
            "ingest_chunks_per_s": round(len(chunks) / write_s),
            "open_and_warmup_s": round(open_s, 2), "queries": len(qs),
            "p50_ms": round(percentile(latencies, 50), 2),
            "p95_ms": round(percentile(latencies, 95), 2),
            "cpu_p50_ms": round(percentile(cpu, 50), 2), "counts": counts, "tops": tops}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--qdrant-queries", type=int, default=20,
                    help="embedded Qdrant takes ~1 s a query at 100k: fewer queries")
    ap.add_argument("--qdrant-path-chunks", type=int, default=2000,
                    help="embedded Qdrant on disk: ingest rate measured on this many chunks")
    ap.add_argument("--backends", default="local,postgres,qdrant,qdrant-path")
    ap.add_argument("--postgres-dsn", default="postgresql://postgres@127.0.0.1:54329/citadel")
    ap.add_argument("--out", type=Path, default=None, help="write results as JSON here")
    args = ap.parse_args()

    load_before = os.getloadavg()
    t0 = time.perf_counter()
    documents, chunks, texts = synthesise(args.chunks)
    vectors = hashing_vectors(texts)
    qs = queries(args.queries)
    qvecs = list(hashing_vectors(qs))
    print(f"data: {len(documents)} documents, {len(chunks)} chunks, {len(qs)} queries, "
          f"{DIM}-d hashing vectors, prepared in {time.perf_counter() - t0:.1f}s", flush=True)
    data = (documents, chunks, texts, vectors)

    results = []
    work = Path(tempfile.mkdtemp(prefix="citadel-bench-"))
    try:
        for name in args.backends.split(","):
            if name == "local":
                from citadel.retrieval.backends.local import LocalBackend

                backend: Backend = LocalBackend(work / "local")
                results.append(run_backend("local", backend, data, qs, qvecs))
            elif name == "qdrant":
                from citadel.retrieval.backends.qdrant import QdrantBackend

                backend = QdrantBackend(path=":memory:")
                n = args.qdrant_queries
                results.append(run_backend("qdrant (embedded, :memory:)", backend, data,
                                           qs[:n], qvecs[:n], warmup=1))
                backend.close()
            elif name == "qdrant-path":
                # Embedded on disk commits (and fsyncs) SQLite once per point: far too slow
                # for 100k here, so only its ingest rate is measured, on the first chunks.
                from citadel.retrieval.backends.qdrant import QdrantBackend

                n = args.qdrant_path_chunks
                subset = ([d for d in documents if d.document_id in
                           {c.document_id for c in chunks[:n]}], chunks[:n], texts[:n],
                          vectors[:n])
                backend = QdrantBackend(path=work / "qdrant")
                results.append(run_backend(f"qdrant (embedded, path=), first {n:,} chunks",
                                           backend, subset, qs[:3], qvecs[:3], warmup=1))
                backend.close()
            elif name == "postgres":
                results.append(run_postgres(args.postgres_dsn, data, qs, qvecs))
            print(f"{results[-1]['backend']}: ingest {results[-1]['ingest_chunks_per_s']}/s, "
                  f"p50 {results[-1]['p50_ms']} ms, p95 {results[-1]['p95_ms']} ms", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    local = next((r for r in results if r["backend"] == "local"), None)
    load_after = os.getloadavg()
    print(f"\n{args.chunks:,} SciFact sentence-window chunks, {DIM}-d hashing vectors, "
          f"k={K}, candidates={CANDIDATES}; {os.cpu_count()} CPUs, 1-min load average "
          f"{load_before[0]:.1f} at start, {load_after[0]:.1f} at end\n")
    print("| backend | ingest (chunks/s) | write (s) | open+warm-up (s) | queries | "
          "hybrid p50 (ms) | hybrid p95 (ms) | this process's CPU p50 (ms) | "
          "top-3 overlap with local |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        overlap = "—"
        if local and r is not local and r["chunks"] == local["chunks"]:
            pairs = list(zip(r["tops"], local["tops"], strict=False))
            overlap = f"{statistics.mean(len(set(a[:3]) & set(b[:3])) for a, b in pairs):.2f}"
        print(f"| {r['backend']} | {r['ingest_chunks_per_s']:,} | {r['write_s']} | "
              f"{r['open_and_warmup_s']} | {r['queries']} | {r['p50_ms']} | {r['p95_ms']} | "
              f"{r['cpu_p50_ms']} | {overlap} |")
    if args.out:
        args.out.write_text(json.dumps([{k: v for k, v in r.items() if k != "tops"}
                                        for r in results], indent=2))


def run_postgres(dsn: str, data, qs, qvecs) -> dict:
    import psycopg
    from psycopg import sql
    from psycopg.conninfo import make_conninfo

    from citadel.retrieval.backends.postgres import PostgresBackend

    name = f"citadel_bench_{uuid.uuid4().hex[:8]}"
    admin = make_conninfo(dsn, dbname="postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    backend = PostgresBackend(make_conninfo(dsn, dbname=name), timeout=30)
    try:
        return run_backend("postgres (pgvector HNSW + FTS)", backend, data, qs, qvecs)
    finally:
        backend.close()
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                sql.Identifier(name)))


if __name__ == "__main__":
    main()
