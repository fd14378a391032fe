"""Where an answer's time goes inside the engine, in-process, single-threaded.

    CITADEL_HOME=/tmp/demo .venv/bin/python -m citadel ingest -q examples/support-kb
    CITADEL_HOME=/tmp/demo PYTHONPATH=src .venv/bin/python benchmarks/engine_stages.py

Opens the active snapshot with `Engine.open` (request log on, as `citadel serve` runs it),
answers the questions of `http_load.py` (once as warm-up, then `--rounds` times) and prints the
wall time per answer, the trace's stage latencies and the time inside a few functions
(question analysis, query embedding, the request log append, quote normalisation). Run it
with PYTHONPATH pointing at another checkout's `src` to compare code versions; the functions
are found by name and skipped where a version lacks them.
"""

from __future__ import annotations

import argparse
import collections
import functools
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from http_load import QUESTIONS  # noqa: E402

TIMED = [("citadel.text.analysis", "Analyser", "parse", "question analysis (spaCy)"),
         ("citadel.observability.request_log", "RequestLog", "append", "request log append"),
         ("citadel.text.quotes", None, "normalize_with_map", "quote normalisation")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    import importlib

    spent: collections.Counter[str] = collections.Counter()

    def timed(owner: object, name: str, label: str) -> None:
        fn = getattr(owner, name)

        @functools.wraps(fn)
        def wrapper(*a: object, **k: object) -> object:
            t0 = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                spent[label] += time.perf_counter() - t0

        setattr(owner, name, wrapper)

    for module, cls, name, label in TIMED:
        mod = importlib.import_module(module)
        owner = getattr(mod, cls) if cls else mod
        if hasattr(owner, name):
            timed(owner, name, label)
    # Modules that imported `normalize`/`normalize_with_map` by name call the originals;
    # patch those names too.
    quotes = importlib.import_module("citadel.text.quotes")
    for module in ("citadel.answering.context", "citadel.answering.judgement", "citadel.gate"):
        mod = importlib.import_module(module)
        for name in ("normalize", "locate_quote", "locate_span"):
            if hasattr(mod, name) and getattr(mod, name) is getattr(quotes, name, None):
                timed(mod, name, f"{name} (from {module.rsplit('.', 1)[1]})")
    from citadel.engine import Engine

    engine = Engine.open()
    timed(type(engine.embedder), "embed_query", "query embedding")
    for q in QUESTIONS:
        engine.answer(q)
    spent.clear()
    stages: collections.Counter[str] = collections.Counter()
    n = 0
    cpu0, t0 = time.process_time(), time.perf_counter()
    for _ in range(args.rounds):
        for q in QUESTIONS:
            answer = engine.answer(q)
            n += 1
            stages.update(answer.trace.latencies_ms)
    wall = (time.perf_counter() - t0) * 1000 / n
    cpu = (time.process_time() - cpu0) * 1000 / n
    print(f"{n} answers: {wall:.1f} ms wall, {cpu:.1f} ms CPU per answer")
    print("trace stages (ms per answer): " + ", ".join(
        f"{k} {v / n:.2f}" for k, v in stages.items()))
    for label, seconds in spent.most_common():
        print(f"  {label}: {seconds * 1000 / n:.2f} ms")
    engine.close()


if __name__ == "__main__":
    main()
