"""SciFact (BEIR layout): the corpus as a knowledge base, test queries with relevance
judgements, and (claim, rationale sentence) pairs for calibrating claim support.

Expected files under the data folder: `corpus.jsonl` (`_id`, `title`, `text`, `sentences`),
`queries.jsonl` (`_id`, `text`, `metadata`: doc id -> evidence sets
`[{"sentences": [i, ...], "label": "SUPPORT" | "CONTRADICT"}]`), `qrels/test.tsv`.
"""

from __future__ import annotations

import csv
import hashlib
import json
import random
from dataclasses import dataclass
from pathlib import Path

from citadel.evaluation.calibration import Pair
from citadel.evaluation.datasets import DatasetError

REQUIRED = ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv")


@dataclass(frozen=True)
class Query:
    id: str
    text: str
    relevant: frozenset[str]


@dataclass(frozen=True)
class SciFact:
    root: Path
    corpus: dict[str, dict]
    queries: dict[str, dict]
    test: tuple[Query, ...]
    sha256: str

    def describe(self) -> dict[str, object]:
        return {"name": "scifact", "path": str(self.root), "version": "beir-scifact-test",
                "sha256": self.sha256, "rows": len(self.test)}


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def load_scifact(root: Path) -> SciFact:
    missing = [name for name in REQUIRED if not (root / name).is_file()]
    if missing:
        raise DatasetError(f"SciFact data at {root} lacks {', '.join(missing)}")
    digest = hashlib.sha256()
    for name in REQUIRED:
        digest.update((root / name).read_bytes())
    corpus = {d["_id"]: d for d in _jsonl(root / "corpus.jsonl")}
    queries = {q["_id"]: q for q in _jsonl(root / "queries.jsonl")}
    relevant: dict[str, set[str]] = {}
    with (root / "qrels" / "test.tsv").open(newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            if int(row["score"]) > 0:
                relevant.setdefault(row["query-id"], set()).add(row["corpus-id"])
    test = tuple(
        Query(qid, queries[qid]["text"], frozenset(docs))
        for qid, docs in sorted(relevant.items(), key=lambda kv: int(kv[0]))
        if qid in queries
    )
    return SciFact(root, corpus, queries, test, digest.hexdigest())


def write_corpus(data: SciFact, folder: Path) -> Path:
    """One Markdown file per abstract (`<_id>.md`: the title as heading, then the abstract),
    so the ordinary ingest pipeline builds the snapshot and document_id == corpus `_id`.
    Unchanged files are not rewritten."""
    folder.mkdir(parents=True, exist_ok=True)
    for doc_id, doc in data.corpus.items():
        title = " ".join((doc.get("title") or doc_id).split())
        body = f"# {title}\n\n{doc['text'].strip()}\n"
        path = folder / f"{doc_id}.md"
        if not path.is_file() or path.read_text("utf-8") != body:
            path.write_text(body, "utf-8")
    return folder


def rationale_pairs(data: SciFact, seed: int = 0) -> tuple[list[Pair], list[Pair]]:
    """(SUPPORT vs CONTRADICT rationales, SUPPORT rationales vs random non-rationale
    sentences of the same abstract). Evidence = the rationale's sentences joined."""
    rng = random.Random(seed)
    contradict: list[Pair] = []
    unrelated: list[Pair] = []
    for qid, query in sorted(data.queries.items(), key=lambda kv: kv[0]):
        for doc_id, sets in sorted((query.get("metadata") or {}).items()):
            sentences = data.corpus.get(doc_id, {}).get("sentences") or []
            used: set[int] = set()
            for evidence_set in sets:
                idx = [i for i in evidence_set["sentences"] if i < len(sentences)]
                if not idx:
                    continue
                used.update(idx)
                supports = evidence_set["label"] == "SUPPORT"
                pair = Pair(qid, query["text"], " ".join(sentences[i] for i in idx), supports)
                contradict.append(pair)
                if supports:
                    unrelated.append(pair)
            others = [i for i in range(len(sentences)) if i not in used]
            if others and any(s["label"] == "SUPPORT" for s in sets):
                unrelated.append(Pair(qid, query["text"], sentences[rng.choice(others)], False))
    return contradict, unrelated


def find_data(start: Path) -> Path | None:
    """`shared/data/scifact` in `start` or one of its parents (the project's shared data)."""
    for folder in (start, *start.parents):
        candidate = folder / "shared" / "data" / "scifact"
        if candidate.is_dir():
            return candidate
    return None
