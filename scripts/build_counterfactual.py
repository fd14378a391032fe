"""Build the counterfactual suite's cases from the SQuAD 2.0 paragraphs.

    .venv/bin/python scripts/build_counterfactual.py [--squad FILE] [--out FILE]

One case per paragraph (its first answerable question whose gold answer is an entity, date or
number), the answer swapped for a span of the same type from another paragraph; see
`citadel.evaluation.counterfactual`. Deterministic for a given file, seed and analyser.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from citadel.evaluation.counterfactual import build_cases, write_cases
from citadel.evaluation.squad2 import find_squad2, load_squad2
from citadel.text.analysis import Analyser

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--squad", type=Path, default=None,
                        help="SQuAD 2.0 file (default ../shared/data/squad2/dev-half.json)")
    parser.add_argument("--out", type=Path, default=ROOT / "eval" / "counterfactual.jsonl")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    path = args.squad or find_squad2(ROOT)
    if path is None:
        print("SQuAD 2.0 data not found: pass --squad FILE", file=sys.stderr)
        return 2
    data = load_squad2(path)
    cases = build_cases(data, Analyser(), seed=args.seed)
    write_cases(cases, args.out)
    kinds = Counter(c.kind for c in cases)
    print(f"wrote {len(cases)} cases from {len(data.paragraphs)} paragraphs to {args.out}: "
          + ", ".join(f"{k} {n}" for k, n in kinds.most_common()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
