"""Build (once) a CITADEL_HOME holding SciFact, one Markdown document per abstract.

    .venv/bin/python benchmarks/scifact_corpus.py [--home benchmarks/results/scifact-home]

Embedding 5,183 abstracts with MiniLM takes minutes on 2 cores; a second run reuses the
snapshot (same files => same fingerprint => same snapshot id).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from scifact import write_corpus

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_HOME = ROOT / "benchmarks" / "results" / "scifact-home"


def build_home(home: Path) -> str:
    from citadel.config import Settings
    from citadel.ingest.pipeline import ingest

    docs = home.parent / "scifact-docs"
    n = write_corpus(docs)
    print(f"{n} abstracts in {docs}", flush=True)
    report = ingest([docs], Settings(home=home), progress=True)
    verb = "reused" if report.reused else "built"
    print(f"{verb} snapshot {report.snapshot_id}: {report.documents} documents, "
          f"{report.chunks} chunks in {report.seconds:.1f}s", flush=True)
    return report.snapshot_id


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--home", type=Path, default=DEFAULT_HOME)
    args = parser.parse_args()
    build_home(args.home)


if __name__ == "__main__":
    main()
