"""Re-ingest benchmark: SciFact, full ingest vs re-ingest after changing 1% of documents.

    .venv/bin/python benchmarks/reingest_scifact.py            # all 5,183 abstracts, MiniLM
    .venv/bin/python benchmarks/reingest_scifact.py --limit 300 --embedder hashing   # smoke

Each abstract becomes a Markdown file (`# title\\n\\ntext`). Three ingests run in one process
against one fresh CITADEL_HOME, with one embedder whose model is loaded before any timing:
(1) full ingest (empty embedding cache), (2) the same corpus again (snapshot reused),
(3) after revising the title and appending a sentence to 1% of the documents (every chunk of
those documents changes). Prints a table; writes `benchmarks/results/reingest_scifact.json`.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from scifact import DATA  # noqa: E402

from citadel.config import Settings  # noqa: E402
from citadel.ingest.pipeline import IngestReport, ingest  # noqa: E402
from citadel.retrieval.embedders import get_embedder  # noqa: E402

DEFAULT_CORPUS = DATA / "corpus.jsonl"


def write_corpus(corpus: Path, dest: Path, limit: int | None) -> list[Path]:
    files = []
    with corpus.open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            path = dest / f"{row['_id']}.md"
            path.write_text(f"# {row['title'].strip() or row['_id']}\n\n{row['text'].strip()}\n",
                            encoding="utf-8")
            files.append(path)
            if limit and len(files) >= limit:
                break
    return files


def revise(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    title, _, body = text.partition("\n")
    path.write_text(f"{title} (revised)\n{body.rstrip()} This abstract was revised.\n",
                    encoding="utf-8")


def row(name: str, r: IngestReport) -> dict[str, object]:
    return {"run": name, "seconds": round(r.seconds, 2), "documents": r.documents,
            "chunks": r.chunks, "embedded": r.embedded, "reused_snapshot": r.reused,
            "snapshot_id": r.snapshot_id, "stages": r.stage_seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--limit", type=int, default=None, help="Only the first N abstracts.")
    parser.add_argument("--fraction", type=float, default=0.01, help="Share of docs changed.")
    parser.add_argument("--embedder", default="minilm", help="minilm (default) or hashing.")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = parser.parse_args()
    if not args.corpus.is_file():
        sys.exit(f"SciFact corpus not found at {args.corpus} (pass --corpus)")

    with tempfile.TemporaryDirectory(prefix="citadel-reingest-") as tmp:
        docs, home = Path(tmp) / "scifact", Path(tmp) / "home"
        docs.mkdir()
        files = write_corpus(args.corpus, docs, args.limit)
        settings = Settings(home=home, embedder=args.embedder)
        embedder = get_embedder(args.embedder)
        t0 = time.perf_counter()
        embedder.embed(["warm up"])  # load the model outside every timed run
        load_s = time.perf_counter() - t0

        full = ingest([docs], settings, embedder=embedder, progress=True)
        same = ingest([docs], settings, embedder=embedder, progress=False)
        changed = random.Random(args.seed).sample(files, max(1, math.ceil(len(files)
                                                                          * args.fraction)))
        for path in changed:
            revise(path)
        incremental = ingest([docs], settings, embedder=embedder, progress=True)

    ratio = full.seconds / incremental.seconds
    results = {
        "corpus": str(args.corpus), "embedder": args.embedder, "documents": len(files),
        "changed_documents": len(changed), "model_load_seconds": round(load_s, 2),
        "runs": [row("full ingest", full), row("same corpus again", same),
                 row(f"re-ingest, {len(changed)} docs changed", incremental)],
        "full_over_incremental": round(ratio, 1),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "reingest_scifact.json").write_text(json.dumps(results, indent=2) + "\n")

    print(f"\nSciFact re-ingest ({len(files)} documents, embedder {args.embedder}, "
          f"model load {load_s:.1f}s not counted)\n")
    print("| run | seconds | chunks | embedded | speed-up vs full |")
    print("|---|---:|---:|---:|---:|")
    for name, r in (("full ingest (empty cache)", full), ("same corpus again", same),
                    (f"re-ingest, {len(changed)} docs ({args.fraction:.0%}) changed",
                     incremental)):
        print(f"| {name} | {r.seconds:.1f} | {r.chunks} | {r.embedded} | "
              f"{full.seconds / r.seconds:.1f}x |")
    print(f"\nincremental stages (s): {incremental.stage_seconds}")


if __name__ == "__main__":
    main()
