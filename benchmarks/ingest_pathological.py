"""Load + chunk cost of pathological HTML files, against an ordinary page of the same size.

    PYTHONPATH=src python benchmarks/ingest_pathological.py [--sizes 1,10] [--json out.json]

Three pages per size (MB), written to a temporary folder and ingested by the real loader
(`load_corpus`) and chunker (`chunk_corpus`, with the default per-document bounds):

* ordinary: paragraphs of support-KB sentences with a heading every ~3 KB;
* nested-hidden: a hidden region holding tens of thousands of unclosed elements, then as many
  closed paragraphs (the end-tag lookup that used to make parsing quadratic);
* headings: nothing but headings over one word each (~650,000 in 10 MB), which used to
  become as many sections and chunks (5.75 GB RSS); now refused past
  `max_sections_per_document`.

Each case is timed in one pass and its peak Python allocation measured (tracemalloc) in a
second one, in this same process, and reported with its ratio to the ordinary page.
"""

from __future__ import annotations

import argparse
import gc
import json
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from citadel.ingest.chunking import ChunkingParams
from citadel.ingest.loaders import load_corpus

try:  # the pipeline's refusal of oversized documents (absent before the DoS fix)
    from citadel.ingest.pipeline import chunk_corpus
except ImportError:  # pragma: no cover - lets the same script time the old code
    chunk_corpus = None

SENTENCES = (
    "Refunds are issued to the original payment method within five business days.",
    "Items must be returned unworn, with their tags, within thirty days of delivery.",
    "Gift cards are valid for twenty-four months from the date of purchase.",
    "Our support team answers messages from Monday to Saturday, nine to six.",
    "Sale items can be exchanged for another size but are not refunded.",
)
MB = 1_000_000


def ordinary(size: int) -> str:
    parts = ["<html><head><title>Help centre</title></head><body>"]
    length, i = len(parts[0]), 0
    while length < size:
        block = (f"<h2>Topic {i}</h2>" if i % 8 == 0 else "") + "<p>" + " ".join(
            SENTENCES[(i + k) % len(SENTENCES)] for k in range(5)) + "</p>\n"
        parts.append(block)
        length += len(block)
        i += 1
    return "".join(parts) + "</body></html>"


def nested_hidden(size: int) -> str:
    depth = size // len("<span><p>planted</p>")
    return ("<html><body><div hidden>" + "<span>" * depth + "<p>planted</p>" * depth
            + "</div><h2>Refunds</h2><p>Refunds take five days.</p></body></html>")


def headings(size: int) -> str:
    # A word under each heading, so that every section is a chunk of its own.
    count = size // len("<h2>123456</h2>x")
    return "<html><body>" + "".join(f"<h2>{i}</h2>x" for i in range(count)) + "</body></html>"


def ingest_once(folder: Path) -> dict[str, object]:
    corpus = load_corpus([folder], max_file_bytes=100 * MB)
    params = ChunkingParams()
    if chunk_corpus is None:
        from citadel.ingest.chunking import chunk_document

        chunks = [c for d in corpus.documents for c in chunk_document(d, params)]
        return {"documents": len(corpus.documents), "chunks": len(chunks), "refused": ""}
    chunked = chunk_corpus(corpus.documents, params)
    return {"documents": len(chunked.documents), "chunks": len(chunked.chunks),
            "refused": "; ".join(s.reason for s in chunked.refused)}


def measure(build: Callable[[int], str], size: int, root: Path) -> dict[str, object]:
    folder = root / f"{build.__name__}-{size}"
    folder.mkdir()
    html = build(size)
    (folder / "page.html").write_text(html)
    gc.collect()
    started = time.perf_counter()
    result = ingest_once(folder)
    seconds = time.perf_counter() - started
    gc.collect()
    tracemalloc.start()
    ingest_once(folder)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"case": build.__name__, "bytes": len(html.encode()), "seconds": round(seconds, 3),
            "peak_mb": round(peak / MB, 1), **result}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1,10", help="Page sizes in MB, comma-separated.")
    ap.add_argument("--cases", default="ordinary,nested_hidden,headings")
    ap.add_argument("--json", type=Path, default=None, help="Also write the rows here.")
    args = ap.parse_args()
    builders = {f.__name__: f for f in (ordinary, nested_hidden, headings)}
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for size_mb in (float(s) for s in args.sizes.split(",")):
            size = int(size_mb * MB)
            base: dict[str, object] | None = None
            for name in args.cases.split(","):
                row = measure(builders[name], size, Path(tmp))
                if name == "ordinary":
                    base = row
                if base is not None:
                    row["time_ratio"] = round(row["seconds"] / max(base["seconds"], 1e-9), 2)
                    row["memory_ratio"] = round(row["peak_mb"] / max(base["peak_mb"], 1e-9), 2)
                rows.append(row)
                print(json.dumps(row), flush=True)
    print()
    print("| case | size | load+chunk s | x ordinary | peak MB | x ordinary | documents | "
          "chunks | refused |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['case']} | {r['bytes'] / MB:.1f} MB | {r['seconds']} | "
              f"{r.get('time_ratio', '')} | {r['peak_mb']} | {r.get('memory_ratio', '')} | "
              f"{r['documents']} | {r['chunks']} | {r['refused'] or '-'} |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
