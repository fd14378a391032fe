"""Probe a candidate judgement feature before building it: the MiniLM cosine between the
question and each context sentence (today the judgement only sees its chunk's dense score).

Reads the features `scripts/train_judgement.py` cached (HOME/features.jsonl.gz, which holds
the question and sentence texts), embeds every distinct text once with MiniLM, and runs the
same leave-one-article-out cross-validation as the trainer twice: with today's features, and
with two more per sentence (its cosine to the question, and that cosine minus the context's
best). Prints, per variant: the best sentence's hit rate on answerable questions (held out),
the AUC of the decider's probability for answerable vs unanswerable SQuAD questions, and the
pooled outcome at a few thresholds. Nothing is written but the vectors' cache beside the
features.

    .venv/bin/python scripts/train_judgement.py            # once: builds the features cache
    .venv/bin/python scripts/probe_sentence_similarity.py [--home DIR]
"""

from __future__ import annotations

import argparse
import copy
import gzip
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import train_judgement as tj  # noqa: E402

from citadel.retrieval.embedders import get_embedder  # noqa: E402

THRESHOLDS = (0.1, 0.2, 0.3, 0.38, 0.5)


def vectors(rows: list[dict], cache: Path) -> dict[str, np.ndarray]:
    texts = sorted({s["text"] for r in rows for s in r["sentences"]}
                   | {r["question"] for r in rows})
    if cache.is_file():
        data = np.load(cache, allow_pickle=True)
        found = dict(zip(data["texts"].tolist(), data["vectors"], strict=True))
        if set(texts) <= set(found):
            return found
    print(f"embedding {len(texts):,} texts with MiniLM ...", file=sys.stderr)
    matrix = get_embedder("minilm").embed(texts)
    np.savez(cache, texts=np.array(texts, dtype=object), vectors=matrix)
    return dict(zip(texts, matrix, strict=True))


def with_similarity(rows: list[dict], vecs: dict[str, np.ndarray]) -> list[dict]:
    out = copy.deepcopy(rows)
    for r in out:
        q = vecs[r["question"]]
        sims = [float(vecs[s["text"]] @ q) for s in r["sentences"]]
        best = max(sims, default=0.0)
        for s, sim in zip(r["sentences"], sims, strict=True):
            s["x"] = [*s["x"], sim, sim - best]
    return out


def report(name: str, rows: list[dict]) -> None:
    from sklearn.metrics import roc_auc_score

    pooled, hits = [], {}
    for g in dict.fromkeys(r["group"] for r in rows):
        train = [r for r in rows if r["group"] != g]
        test = [r for r in rows if r["group"] == g]
        weights = tj.fit(train, f"probe-without-{g}")
        decided = tj.decide(test, weights)
        pooled += [(r, p, y, weights.threshold) for r, p, y in decided]
        answerable = [y for r, _, y in decided if r["answerable"]]
        hits[g] = sum(answerable) / max(len(answerable), 1)
    squad = [(r, p, y) for r, p, y, _ in pooled if r["group"] != "demo"]
    thresholds = {r["id"]: t for r, _, _, t in pooled}
    answerable = [y for r, _, y in squad if r["answerable"]]
    auc = roc_auc_score([int(r["answerable"]) for r, _, _ in squad], [p for _, p, _ in squad])
    print(f"\n## {name}")
    print(f"best sentence holds the answer (held out): squad2 "
          f"{sum(answerable) / len(answerable):.3f}, demo {hits.get('demo', 0):.3f}")
    print(f"AUC answerable vs unanswerable (squad2, held out): {auc:.3f}")
    print("each fold's own threshold: " + tj._fmt(tj._pooled(squad, thresholds)))
    for t in THRESHOLDS:
        print(f"threshold {t:.2f}: " + tj._fmt(tj.outcome(squad, t)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=tj.ROOT / ".citadel" / "train-judgement")
    args = parser.parse_args()
    cache = args.home / "features.jsonl.gz"
    if not cache.is_file():
        sys.exit(f"no features at {cache}: run scripts/train_judgement.py --home {args.home}")
    with gzip.open(cache, "rt") as fh:
        rows = [json.loads(line) for line in fh]
    if any("question" not in r for r in rows):
        sys.exit(f"{cache} predates the texts; rebuild it: scripts/train_judgement.py")
    vecs = vectors(rows, args.home / "probe-vectors.npz")
    report("today's features", rows)
    report("plus sentence-question cosine (MiniLM)", with_similarity(rows, vecs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
