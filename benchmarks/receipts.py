"""What signing costs per answer: the same questions answered by two engines over one
snapshot, one signing its answers (the default) and one not, taking turns question by
question in one process; plus the signature alone (canonical JSON + Ed25519), timed around
the signer.

    .venv/bin/python benchmarks/receipts.py [--rounds 5]

Knowledge base: the demo KB (MiniLM, default settings), its 32 benchmark questions. Reported:
p50 / p95 of a whole answer, signed and unsigned, and of the signature alone. Writes
benchmarks/results/receipts.json.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from citadel.config import Settings  # noqa: E402
from citadel.engine import Engine  # noqa: E402
from citadel.ingest.pipeline import ingest  # noqa: E402
from citadel.knowledge.receipts import Signer  # noqa: E402
from citadel.knowledge.signing import KeyStore  # noqa: E402

QUESTIONS = [json.loads(line)["question"] for line in
             (ROOT / "benchmarks" / "demo_questions.jsonl").read_text().splitlines() if line]


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


class TimedSigner:
    """The engine's signer, timing each signature."""

    def __init__(self, signer: Signer) -> None:
        self.signer = signer
        self.ms: list[float] = []

    def __call__(self, answer):
        t0 = time.perf_counter()
        signed = self.signer(answer)
        self.ms.append((time.perf_counter() - t0) * 1000)
        return signed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="citadel-receipts-"))
    try:
        settings = Settings(home=tmp / "home", log_requests=False)
        ingest([ROOT / "examples" / "support-kb"], settings, progress=False)
        signed = Engine.open(settings)
        timed = TimedSigner(Signer(KeyStore(settings.home)))
        signed.signer = timed
        unsigned = Engine.open(settings, embedder=signed.embedder)
        unsigned.signer = None
        times: dict[str, list[float]] = {"signed": [], "unsigned": []}
        for engine in (signed, unsigned):
            engine.answer(QUESTIONS[0])  # warm up
        timed.ms.clear()
        for _ in range(args.rounds):
            for q in QUESTIONS:
                for name, engine in (("signed", signed), ("unsigned", unsigned)):
                    t0 = time.perf_counter()
                    engine.answer(q)
                    times[name].append((time.perf_counter() - t0) * 1000)
        signed.close()
        unsigned.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    rows = {name: {"p50_ms": round(pct(t, 0.5), 2), "p95_ms": round(pct(t, 0.95), 2),
                   "n": len(t)} for name, t in {**times, "signature alone": timed.ms}.items()}
    for name, row in rows.items():
        print(f"{name:16} p50 {row['p50_ms']:8.2f} ms   p95 {row['p95_ms']:8.2f} ms   "
              f"n={row['n']}")
    out = ROOT / "benchmarks" / "results" / "receipts.json"
    out.write_text(json.dumps(rows, indent=2) + "\n")
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
