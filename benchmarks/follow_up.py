"""Cost of making a follow-up stand alone: the `follow_up` stage of each follow-up answer.

    .venv/bin/python benchmarks/follow_up.py [--rounds 5] [--chains FILE]

The demo knowledge base (MiniLM, ingested into a temporary home) answers every chain of
kb "demo" in the chains file (default: the shipped evaluation/data/conversations.jsonl,
else tests/evaluation/data/conversations-mini.jsonl), turn by turn with the earlier turns as
history, `--rounds` times. Reported: the follow_up stage (the rewrite: spaCy parses of the
follow-up and of the earlier questions, the rules) p50 and p95 over follow-up turns, next to
the whole answer's p50 for scale. The engine caches parses (512), so a later round re-parses
nothing it saw: both the first round and all rounds are reported.

Prints a Markdown table; writes benchmarks/results/follow_up.json.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from citadel.config import Settings  # noqa: E402
from citadel.engine import Engine  # noqa: E402
from citadel.evaluation.conversations import default_chains, load_chains  # noqa: E402
from citadel.ingest.pipeline import ingest  # noqa: E402
from citadel.records import Turn  # noqa: E402

MINI = ROOT / "tests" / "evaluation" / "data" / "conversations-mini.jsonl"


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def one_round(engine: Engine, chains) -> tuple[list[float], list[float]]:
    stage, total = [], []
    for chain in chains:
        history: list[Turn] = []
        for turn in chain.turns:
            answer = engine.answer(turn.question, history=history)
            if history:
                stage.append(answer.trace.latencies_ms["follow_up"])
                total.append(answer.trace.latencies_ms["total"])
            history.append(Turn(question=turn.question))
    return stage, total


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--chains", type=Path, default=None)
    args = parser.parse_args()
    path = args.chains or (default_chains() if default_chains().is_file() else MINI)
    chains = [c for c in load_chains(path).chains if c.kb == "demo"]
    home = Path(tempfile.mkdtemp(prefix="citadel-bench-"))
    try:
        settings = Settings(home=home, log_requests=False)
        ingest([ROOT / "examples" / "support-kb"], settings, progress=False)
        engine = Engine.open(settings)
        try:
            rounds = [one_round(engine, chains) for _ in range(args.rounds)]
        finally:
            engine.close()
    finally:
        shutil.rmtree(home, ignore_errors=True)
    first, _ = rounds[0]
    stage = [v for s, _ in rounds for v in s]
    total = [v for _, t in rounds for v in t]
    result = {"chains": str(path), "follow_ups_per_round": len(first), "rounds": args.rounds,
              "first_round_follow_up_ms": {"p50": round(statistics.median(first), 2),
                                           "p95": round(pct(first, 0.95), 2)},
              "follow_up_ms": {"p50": round(statistics.median(stage), 2),
                               "p95": round(pct(stage, 0.95), 2)},
              "answer_ms_p50": round(statistics.median(total), 1)}
    out = ROOT / "benchmarks" / "results" / "follow_up.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"| follow-ups | follow_up p50 (first round) | p95 (first round) | follow_up p50 | "
          f"p95 | answer p50 |\n|---|---|---|---|---|---|\n"
          f"| {len(first)} × {args.rounds} | {result['first_round_follow_up_ms']['p50']} ms | "
          f"{result['first_round_follow_up_ms']['p95']} ms | {result['follow_up_ms']['p50']} ms"
          f" | {result['follow_up_ms']['p95']} ms | {result['answer_ms_p50']} ms |")


if __name__ == "__main__":
    main()
