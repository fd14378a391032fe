"""The local backend at scale: exact numpy search vs the faiss HNSW graph (exact rescoring),
and pgvector, on the same chunks in one run.

Data: SciFact abstracts cut into sentence windows (widths 2, 3, 4 first, as
`backends_100k.py` does, then 1, 5, 6, ... up to 40: about 287k distinct windows; past them,
windows crossing the join of two abstracts put end to end), vectors from the deterministic
hashing embedder at 384 dimensions (MiniLM's width; embedding 1M passages with MiniLM would
take days here). Queries: SciFact test claims, vectors precomputed, so latency is the
backend's hybrid `search()` alone (k=8, candidates=50, dense + tantivy BM25 fused), after a
warm-up.

Measured per index: build (write_snapshot) time, size on disk, hybrid p50/p95, recall@10 of
the dense leg against the exact top 10 (the reference), and the RSS of a fresh process that
opens the snapshot and serves the queries (peak and after serving; and of it, the part the
process owns, RssAnon, and the part that is mapped files, RssFile: pages of the snapshot's
memory-mapped matrix and lexical index, which the kernel shares and can drop under pressure).

    .venv/bin/python benchmarks/ann_scale.py --chunks 100000
    .venv/bin/python benchmarks/ann_scale.py --chunks 1000000 --queries 200
    .venv/bin/python benchmarks/ann_scale.py --postgres-dsn "$(make -s postgres | tail -n1)"

`--keep DIR` keeps the built snapshots, the queries and the exact top 10 in DIR; a later run
with the same `--keep DIR` (and `--chunks`) serves them again without synthesising or
building (the build time reported is the one measured when they were built).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from backends_100k import DIM, hashing_vectors, percentile, queries, run_postgres
from scifact import data_dir

from citadel.records import Chunk, Document
from citadel.retrieval import ann
from citadel.retrieval.backends.local import LocalBackend

K, CANDIDATES = 8, 50
WIDTHS = (2, 3, 4, 1, *range(5, 41))


def synthesise(limit: int) -> tuple[list[Document], list[Chunk], list[str]]:
    abstracts = []
    with (data_dir() / "corpus.jsonl").open() as fh:
        for line in fh:
            row = json.loads(line)
            text, spans, cursor = row["text"], [], 0
            for sentence in row["sentences"]:
                start = text.find(sentence, cursor)
                if start < 0:
                    break
                spans.append((start, start + len(sentence)))
                cursor = start + len(sentence)
            else:
                if spans:
                    abstracts.append((row, spans))
    documents: dict[str, Document] = {}
    chunks: list[Chunk] = []

    def add(doc_id: str, source: str, title: str, text: str, spans: list[tuple[int, int]],
            width: int, crossing: int | None = None) -> bool:
        """Every window of `width` sentences (only those spanning sentence `crossing` and
        the one before it, when given); True once `limit` chunks exist."""
        for i in range(len(spans) - width + 1):
            if crossing is not None and not i < crossing <= i + width - 1:
                continue
            start, end = spans[i][0], spans[i + width - 1][1]
            content = text[start:end]
            chunks.append(Chunk(
                chunk_id=f"{doc_id}#w{width}s{i}", document_id=doc_id, source=source,
                title=title, section=title, category="scifact", content=content,
                start=start, end=end,
                content_sha256=hashlib.sha256(content.encode()).hexdigest()))
            if doc_id not in documents:
                documents[doc_id] = Document(
                    document_id=doc_id, source=source, title=title, format="text", text=text,
                    category="scifact", content_sha256=hashlib.sha256(text.encode()).hexdigest())
            if len(chunks) >= limit:
                return True
        return False

    def done() -> tuple[list[Document], list[Chunk], list[str]]:
        return list(documents.values()), chunks, [f"{c.title}\n{c.content}" for c in chunks]

    for width in WIDTHS:
        for row, spans in abstracts:
            doc_id = f"scifact-{row['_id']}"
            if add(doc_id, f"scifact/{row['_id']}", row["title"] or doc_id, row["text"], spans,
                   width):
                return done()
    # SciFact has about 287k distinct windows. Past them: documents joining two abstracts
    # (the next one, then the one after, ...), and their windows that cross the join, so
    # every chunk is still real text and distinct from every other.
    for stride in range(1, len(abstracts)):
        for width in range(2, 9):
            for n, (row, spans) in enumerate(abstracts):
                other, other_spans = abstracts[(n + stride) % len(abstracts)]
                joint = row["text"] + " " + other["text"]
                shift = len(row["text"]) + 1
                doc_id = f"scifact-{row['_id']}+{other['_id']}"
                if add(doc_id, f"scifact/{row['_id']}+{other['_id']}",
                       f"{row['title']} / {other['title']}", joint,
                       spans + [(a + shift, b + shift) for a, b in other_spans], width,
                       crossing=len(spans)):
                    return done()
    raise SystemExit(f"could not synthesise {limit:,} chunks (made {len(chunks):,})")


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def serve(snapshot: Path, qfile: Path, ef_search: int) -> None:
    """Child process: open the snapshot, answer every query, report timings and memory."""
    from citadel.retrieval.backends.local import LocalIndex

    data = json.loads(qfile.read_text())
    qvecs = np.asarray(data["vectors"], dtype=np.float32)
    t0 = time.perf_counter()
    index = LocalIndex(snapshot, snapshot.name, 0.5, CANDIDATES,
                       ann_ef_search=ef_search or None)  # 0: the default for its size
    for text, vec in list(zip(data["texts"], qvecs, strict=True))[:5]:
        index.search(text, vec, K)
    opened = time.perf_counter() - t0
    latencies, dense_top = [], []
    for text, vec in zip(data["texts"], qvecs, strict=True):
        t = time.perf_counter()
        index.search(text, vec, K)
        latencies.append((time.perf_counter() - t) * 1000)
        found = index._dense_search(vec, None)
        dense_top.append(sorted(found, key=found.get, reverse=True)[:10])
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text()
                  .splitlines() if ":" in line)
    print(json.dumps({
        "strategy": index.strategy, "open_and_warmup_s": round(opened, 2),
        "ef_search": index._ann.ef_search if index._ann else None,
        "p50_ms": round(percentile(latencies, 50), 2),
        "p95_ms": round(percentile(latencies, 95), 2),
        "rss_mb": int(status["VmRSS"].split()[0]) // 1024,
        "peak_rss_mb": int(status["VmHWM"].split()[0]) // 1024,
        "anon_mb": int(status["RssAnon"].split()[0]) // 1024,
        "file_mb": int(status["RssFile"].split()[0]) // 1024,
        "dense_top10": dense_top}))


def measure(snapshot: Path, qfile: Path, ef_search: int) -> dict:
    out = subprocess.run([sys.executable, __file__, "--serve", str(snapshot), str(qfile),
                          str(ef_search)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        serve(Path(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4]))
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--m", type=int, default=ann.AnnParams().m)
    ap.add_argument("--ef-construction", type=int, default=ann.AnnParams().ef_construction)
    ap.add_argument("--ef-search", default="auto,400,800",
                    help="query breadths to measure (auto: the default for the snapshot's size)")
    ap.add_argument("--postgres-dsn", default=None, help="also measure pgvector (HNSW + FTS)")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--keep", type=Path, default=None,
                    help="keep the snapshots here; serve them again on a later run")
    args = ap.parse_args()
    if args.keep and (args.keep / "meta.json").exists():
        meta = json.loads((args.keep / "meta.json").read_text())
        if meta["chunks"] != args.chunks or meta["m"] != args.m \
                or meta["ef_construction"] != args.ef_construction:
            raise SystemExit(f"{args.keep} holds a different build ({meta}); "
                             "pick another --keep directory or delete it")

    load_before = os.getloadavg()
    kept = bool(args.keep and (args.keep / "meta.json").exists())
    work = args.keep or Path(tempfile.mkdtemp(prefix="citadel-ann-"))
    snap, exact = work / "snapshots" / "kb-ann", work / "snapshots" / "kb-exact"
    qfile = work / "queries.json"
    vectors = None  # built here, or (a kept build) only if PostgreSQL needs them
    rows = []
    try:
        if kept:
            meta = json.loads((work / "meta.json").read_text())
            exact_top, ann_build = meta["exact_top"], meta["build_s"]
            qs = json.loads(qfile.read_text())["texts"]
            print(f"serving the snapshots kept in {work} ({args.chunks:,} chunks)", flush=True)
        else:
            work.mkdir(parents=True, exist_ok=True)
            t0 = time.perf_counter()
            documents, chunks, texts = synthesise(args.chunks)
            vectors = hashing_vectors(texts)
            qs = queries(args.queries)
            qvecs = hashing_vectors(qs)
            exact_top = [[int(r) for r in np.argsort(-(vectors @ q))[:10]] for q in qvecs]
            print(f"data: {len(documents):,} documents, {len(chunks):,} chunks, {len(qs)} "
                  f"queries, prepared in {time.perf_counter() - t0:.0f} s", flush=True)
            qfile.write_text(json.dumps({"texts": qs, "vectors": qvecs.tolist()}))
            params = ann.AnnParams(args.m, args.ef_construction)
            backend = LocalBackend(work / "snapshots", ann_min_chunks=1, ann_params=params)
            t = time.perf_counter()
            backend.write_snapshot("kb-ann", documents, chunks, vectors, texts)
            ann_build = time.perf_counter() - t
            # The exact twin: the same files without the graph (hard links, no copy).
            shutil.copytree(snap, exact, copy_function=os.link,
                            ignore=shutil.ignore_patterns(ann.FILE))
            del chunks, documents  # the children serve from disk; free this process's copy
            if args.keep:
                (work / "meta.json").write_text(json.dumps({
                    "chunks": args.chunks, "m": args.m,
                    "ef_construction": args.ef_construction, "build_s": ann_build,
                    "exact_top": exact_top}))
        graph_mb = (snap / ann.FILE).stat().st_size / 2**20
        size_mb = du(snap) / 2**20

        def row(name: str, result: dict, build: str) -> dict:
            recall = np.mean([len(set(a) & set(b)) / 10 for a, b in
                              zip(result["dense_top10"], exact_top, strict=True)])
            return {"index": name, "build": build, "p50_ms": result["p50_ms"],
                    "p95_ms": result["p95_ms"], "dense_recall_at_10": round(float(recall), 4),
                    "rss_mb": result["rss_mb"], "peak_rss_mb": result["peak_rss_mb"],
                    "anon_mb": result["anon_mb"], "file_mb": result["file_mb"],
                    "open_s": result["open_and_warmup_s"]}

        rows.append(row("local exact (numpy)", measure(exact, qfile, 0), "—"))
        for ef in (0 if x == "auto" else int(x) for x in args.ef_search.split(",")):
            result = measure(snap, qfile, ef)
            used = f"auto = {result['ef_search']}" if ef == 0 else ef
            rows.append(row(f"local HNSW M={args.m} efC={args.ef_construction} ef={used}",
                            result, f"{ann_build:.0f} s (whole snapshot)"))
        for r in rows:
            print(r, flush=True)
        if args.postgres_dsn:
            documents, chunks, texts = synthesise(args.chunks)
            if vectors is None:
                vectors = hashing_vectors(texts)
            qvecs = np.asarray(json.loads(qfile.read_text())["vectors"], dtype=np.float32)
            pg = run_postgres(args.postgres_dsn, (documents, chunks, texts, vectors), qs,
                              list(qvecs))
            rows.append({"index": "postgres pgvector HNSW + FTS (RRF)",
                         "build": f"{pg['write_s']:.0f} s", "p50_ms": pg["p50_ms"],
                         "p95_ms": pg["p95_ms"], "dense_recall_at_10": None,
                         "rss_mb": None, "peak_rss_mb": None, "anon_mb": None,
                         "file_mb": None, "open_s": None})
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)

    load_after = os.getloadavg()
    print(f"\n{args.chunks:,} chunks, {DIM}-d hashing vectors, k={K}, candidates={CANDIDATES};"
          f" snapshot on disk {size_mb:,.0f} MB of which the graph {graph_mb:,.0f} MB; "
          f"{os.cpu_count()} CPUs, 1-min load {load_before[0]:.1f} at start, "
          f"{load_after[0]:.1f} at end\n")
    print("| index | build | hybrid p50 (ms) | hybrid p95 (ms) | dense recall@10 vs exact | "
          "serving RSS (MB) | of it anon / file (MB) | peak RSS (MB) |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        recall = "—" if r["dense_recall_at_10"] is None else f"{r['dense_recall_at_10']:.3f}"
        print(f"| {r['index']} | {r['build']} | {r['p50_ms']} | {r['p95_ms']} | {recall} | "
              f"{r['rss_mb'] or '—'} | {r['anon_mb'] or '—'} / {r['file_mb'] or '—'} | "
              f"{r['peak_rss_mb'] or '—'} |")
    if args.out:
        args.out.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
