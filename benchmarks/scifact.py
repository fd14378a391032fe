"""SciFact (BEIR format) helpers shared by the benchmarks: corpus as files, queries, qrels,
and the retrieval metrics (nDCG@10, recall@k) computed at document level."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path

# The project's shared data sit beside the repository (`../shared`); nowhere else is looked at.
DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "scifact"


def data_dir() -> Path:
    if not DATA.is_dir():
        raise SystemExit(f"SciFact not found at {DATA} (expected ../shared/data/scifact "
                         "beside the repository)")
    return DATA


def write_corpus(dest: Path, limit: int | None = None) -> int:
    """One Markdown file per abstract, named by corpus id so document_id == corpus id. Files
    already holding the same text are left alone."""
    dest.mkdir(parents=True, exist_ok=True)
    n = 0
    with (data_dir() / "corpus.jsonl").open() as fh:
        for line in fh:
            row = json.loads(line)
            path = dest / f"{row['_id']}.md"
            text = f"# {row['title'].strip() or row['_id']}\n\n{row['text'].strip()}\n"
            if not path.exists() or path.read_text() != text:
                path.write_text(text)
            n += 1
            if limit and n >= limit:
                break
    return n


def test_queries() -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    with (data_dir() / "qrels" / "test.tsv").open() as fh:
        next(fh)
        for line in fh:
            qid, did, score = line.rstrip("\n").split("\t")
            qrels[qid][did] = int(score)
    queries = {}
    with (data_dir() / "queries.jsonl").open() as fh:
        for line in fh:
            row = json.loads(line)
            if row["_id"] in qrels:
                queries[row["_id"]] = row["text"]
    return queries, dict(qrels)


def ndcg_at_k(ranked_docs: list[str], relevant: dict[str, int], k: int = 10) -> float:
    dcg = sum(relevant.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked_docs[:k]))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    idcg = sum(r / math.log2(i + 2) for i, r in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at_k(ranked_docs: list[str], relevant: dict[str, int], k: int = 10) -> float:
    hits = sum(1 for d in ranked_docs[:k] if relevant.get(d, 0) > 0)
    return hits / max(1, sum(1 for r in relevant.values() if r > 0))


def docs_from_chunks(document_ids: list[str]) -> list[str]:
    """Chunk ranking -> document ranking (a document ranks at its best chunk)."""
    seen: dict[str, None] = {}
    for d in document_ids:
        seen.setdefault(d, None)
    return list(seen)
