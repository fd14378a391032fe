"""Build (once) a CITADEL_HOME holding SciFact, one Markdown document per abstract.

    .venv/bin/python benchmarks/scifact_corpus.py [--home benchmarks/results/scifact-home]

Embedding 5,183 abstracts with MiniLM takes minutes on 2 cores; a second run reuses the
snapshot (same files => same fingerprint => same snapshot id).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCIFACT = ROOT.parent.parent / "shared" / "data" / "scifact"
DEFAULT_HOME = ROOT / "benchmarks" / "results" / "scifact-home"


def find_scifact() -> Path:
    """`../shared` from the project root; worktrees live one level deeper."""
    for base in (ROOT.parent / "shared", ROOT.parent.parent / "shared", Path("/work/shared")):
        if (base / "data" / "scifact" / "corpus.jsonl").is_file():
            return base / "data" / "scifact"
    raise SystemExit("SciFact not found: expected ../shared/data/scifact/corpus.jsonl")


def write_documents(corpus: Path, out: Path) -> int:
    """One `<id>.md` per abstract: `# title` then the abstract (document id = SciFact id)."""
    out.mkdir(parents=True, exist_ok=True)
    n = 0
    with corpus.open() as fh:
        for line in fh:
            row = json.loads(line)
            path = out / f"{row['_id']}.md"
            text = f"# {row['title'].strip() or row['_id']}\n\n{row['text'].strip()}\n"
            if not path.exists() or path.read_text() != text:
                path.write_text(text)
            n += 1
    return n


def build_home(home: Path) -> str:
    from citadel.config import Settings
    from citadel.ingest.pipeline import ingest

    docs = home.parent / "scifact-docs"
    n = write_documents(find_scifact() / "corpus.jsonl", docs)
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
