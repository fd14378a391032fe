"""Cross-validated, end-to-end figures of the judgement stage: every suite run through the
real `Engine`, each question answered with weights that never saw its article.

    .venv/bin/python scripts/judgement_cv.py [--folds DIR] [--home DIR] [--out FILE]
        [--suites squad2,counterfactual,demo] [--reader oracle|guesser]

`scripts/train_judgement.py` leaves one weights file per held-out group in `--folds`
(`<article-slug>.json`, `demo.json`). For each SQuAD 2.0 article the squad2 and
counterfactual suites ask that article's questions with the weights (and threshold) fitted
without it; the demo suite runs with the weights fitted without the demo set. Tallies are
summed over the folds and printed per suite; `--out` gets them as JSON. With `--reader`, a
scripted reader (`citadel.evaluation.scripted_readers`) answers in place of the extractive
generator on squad2 and counterfactual: the decision layer measured apart from any model.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from citadel.answering.judgement import load_weights
from citadel.config import Settings
from citadel.evaluation.claims import LexicalClaimScorer
from citadel.evaluation.counterfactual import run_counterfactual
from citadel.evaluation.datasets import load_qa
from citadel.evaluation.squad2 import find_squad2, load_squad2, run_squad2
from citadel.evaluation.suites import RunOptions, run_qa
from citadel.evaluation.tally import RunTally, Tally
from citadel.retrieval.embedders import get_embedder

ROOT = Path(__file__).resolve().parents[1]


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in text.lower()).strip("-")


def _merge(into: RunTally, run: RunTally) -> None:
    for name, t in run.tallies.items():
        have = into.tallies.get(name, Tally())
        into.tallies[name] = Tally(have.total + t.total, have.n + t.n)


def _options(home: Path, fold: Path, reader: str | None = None) -> RunOptions:
    weights = load_weights(fold)
    settings = Settings.load(overrides={"home": home, "judgement_weights": fold,
                                        "support_threshold": weights.threshold})
    return RunOptions(settings, LexicalClaimScorer(), progress=False, reader=reader)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", type=Path,
                        default=ROOT / ".citadel" / "train-judgement" / "folds")
    parser.add_argument("--home", type=Path, default=ROOT / ".citadel" / "judgement-cv")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--suites", default="squad2,counterfactual,demo")
    parser.add_argument("--reader", choices=("oracle", "guesser"), default=None,
                        help="a scripted reader answers instead of the extractive generator "
                             "(squad2 and counterfactual)")
    args = parser.parse_args()
    path = find_squad2(ROOT)
    if path is None:
        sys.exit("SQuAD 2.0 data not found at ../shared/data/squad2/dev-half.json")
    data = load_squad2(path)
    embedder = get_embedder("minilm")
    suites = args.suites.split(",")
    totals: dict[str, RunTally] = {s: RunTally() for s in suites}
    per_fold: dict[str, dict[str, dict[str, float]]] = {s: {} for s in suites}
    for article in data.articles():
        fold = args.folds / f"{_slug(article)}.json"
        if not fold.is_file():
            sys.exit(f"no fold weights {fold}: run scripts/train_judgement.py first")
        if "squad2" in suites:
            options = _options(args.home / "squad2", fold, args.reader)
            run = run_squad2(data, options, embedder, [article])
            _merge(totals["squad2"], run.tally)
            per_fold["squad2"][article] = run.tally.metrics()
        if "counterfactual" in suites:
            options = _options(args.home / "counterfactual", fold, args.reader)
            run = run_counterfactual(data, ROOT / "eval" / "counterfactual.jsonl", options,
                                     embedder, [article])
            _merge(totals["counterfactual"], run.tally)
            per_fold["counterfactual"][article] = run.tally.metrics()
        print(f"fold {article} done", file=sys.stderr)
    if "demo" in suites:
        options = _options(args.home / "demo", args.folds / "demo.json")
        run = run_qa(load_qa(ROOT / "eval" / "qa.jsonl"), [ROOT / "examples" / "support-kb"],
                     options, embedder)
        _merge(totals["demo"], run.tally)
    result = {s: {"metrics": t.metrics(), "counts": t.counts(), "per_fold": per_fold[s]}
              for s, t in totals.items()}
    for suite, r in result.items():
        print(f"\n## {suite} (cross-validated by article)\n")
        for name, value in r["metrics"].items():
            n = r["counts"][name]
            print(f"  {name:28s} {value:.3f}  ({n['sum']:g}/{n['n']})")
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
