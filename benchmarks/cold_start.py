"""Cold start: what a new `citadel` process costs before (and while) it answers.

    .venv/bin/python benchmarks/cold_start.py [--rounds 3] [--baseline-src OTHER/src]

Each round runs, one after the other in new processes: `python -c pass` (the interpreter
alone: the yardstick a busy machine slows down too), `citadel --help`, a cold
`citadel ask QUESTION` (a new process answering one question from the active snapshot; the
file cache is warm, as for any second run), an MCP session over stdio with the official
`mcp` SDK's client (`citadel mcp`: start and initialize, a first `answer`, a second `answer`
to another question), and the phases of a cold ask: a process that loads, in the order an
answer needs them, each thing the answer loads, and times each. Rounds interleave, and with
`--baseline-src` (another checkout's `src`, e.g. the base commit's) each round runs both
trees in turn, so that a noisy neighbour weighs on both alike.

Knowledge base: the demo KB (examples/support-kb), ingested once with the default settings
(MiniLM) into a temporary home that every run reads. Reported per tree: the median of each
step in ms and its ratio to the median `python -c pass` (of every tree: the interpreter is
the same), the CPU time (user + system) and peak RSS of `citadel ask`, and each phase's
median CPU and wall time. Writes benchmarks/results/cold_start.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUESTION = "How long do I have to return an item?"
SECOND_QUESTION = "How much does express delivery cost?"
# Wall times (ms), each also given as a multiple of `python -c pass`.
STEPS = ("python -c pass", "citadel --help", "citadel ask", "mcp start + initialize",
         "mcp first answer", "mcp second answer")
# CPU time (user + system, ms: what a busy machine inflates least) and memory of `ask`.
ASK_CPU, ASK_RSS = "citadel ask CPU ms", "citadel ask peak RSS MB"
PHASES_CHILD = "--phases-child"


def phases() -> None:
    """The phases of a cold ask, run in a child process (this tree's `citadel`): each thing
    an answer loads, loaded in the order the answer needs it; CPU and wall ms as JSON."""
    out: dict[str, dict[str, float]] = {}
    last = [time.process_time(), time.perf_counter()]

    def done(phase: str) -> None:
        cpu, wall = time.process_time(), time.perf_counter()
        out[phase] = {"cpu": (cpu - last[0]) * 1000, "wall": (wall - last[1]) * 1000}
        last[:] = [cpu, wall]

    import citadel.cli.ask  # noqa: F401
    done("import the CLI and `ask`")
    from citadel.config import Settings
    from citadel.engine import Engine
    done("import the engine")
    engine = Engine.open(Settings.load())
    done("open the snapshot (Engine.open)")
    engine.embedder.embed_query(QUESTION)
    done("embedder: load, embed the question")
    try:
        from citadel.text.analysis import import_spacy
    except ImportError:  # a tree from before import_spacy: spaCy with its command line
        def import_spacy():
            import spacy
            return spacy
    import_spacy()
    done("import spaCy")
    engine.judge.analyser.load()
    done("load the spaCy pipeline")
    from wordfreq import zipf_frequency
    zipf_frequency("return", "en")
    done("wordfreq: import, English table")
    engine.judge.reader.load()
    done("reader: check sha256, load")
    engine.answer(QUESTION)
    done("the answer, all loaded")
    engine.close()
    print(json.dumps(out))


def timed_process(argv: list[str], env: dict[str, str]) -> tuple[float, float, int, str]:
    """Wall and CPU time in ms, peak RSS in MB and output of one process run to its end."""
    with tempfile.TemporaryFile() as out:  # a file, not a pipe: nothing waits on a reader
        t0 = time.perf_counter()
        process = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(process.pid, 0)  # this child's own rusage
        elapsed = (time.perf_counter() - t0) * 1000
        process.returncode = code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode()
    if code != 0 or "Traceback" in text:
        raise RuntimeError(f"{' '.join(argv)} failed ({code}): {text}")
    cpu = (usage.ru_utime + usage.ru_stime) * 1000
    return elapsed, cpu, usage.ru_maxrss // 1024, text  # ru_maxrss is in KiB on Linux


async def mcp_session(env: dict[str, str]) -> dict[str, float]:
    """Start `citadel mcp`, initialize, answer twice; each step's wall time in ms."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    server = StdioServerParameters(command=sys.executable, args=["-m", "citadel", "mcp"],
                                   env=env)
    with open(os.devnull, "w") as quiet:  # the server's own messages (stderr)
        t0 = time.perf_counter()
        async with Client(stdio_client(server, errlog=quiet)) as client:  # start, initialize
            t1 = time.perf_counter()
            first = await client.call_tool("answer", {"question": QUESTION})
            t2 = time.perf_counter()
            second = await client.call_tool("answer", {"question": SECOND_QUESTION})
            t3 = time.perf_counter()
    for result in (first, second):
        if result.is_error:
            raise RuntimeError(f"the MCP answer failed: {result.content}")
    return {"mcp start + initialize": (t1 - t0) * 1000, "mcp first answer": (t2 - t1) * 1000,
            "mcp second answer": (t3 - t2) * 1000}


def one_round(env: dict[str, str]) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """Every step once, each in a new process; and the phases of a cold ask."""
    citadel = [sys.executable, "-m", "citadel"]
    figures = {"python -c pass": timed_process([sys.executable, "-c", "pass"], env)[0],
               "citadel --help": timed_process([*citadel, "--help"], env)[0]}
    figures["citadel ask"], figures[ASK_CPU], figures[ASK_RSS], _ = timed_process(
        [*citadel, "ask", QUESTION], env)
    figures.update(asyncio.run(mcp_session(env)))
    output = timed_process([sys.executable, __file__, PHASES_CHILD], env)[3]
    return figures, json.loads(output.strip().splitlines()[-1])


def summary(rounds: list[dict[str, float]], phase_rounds: list[dict[str, dict[str, float]]],
            python_ms: float) -> dict[str, object]:
    medians = {name: statistics.median(r[name] for r in rounds) for name in rounds[0]}
    phase_medians = {phase: {kind: round(statistics.median(p[phase][kind] for p in phase_rounds))
                             for kind in ("cpu", "wall")} for phase in phase_rounds[0]}
    return {"median": {name: round(v, 1) for name, v in medians.items()},
            "ratio_to_python": {step: round(medians[step] / python_ms, 1) for step in STEPS},
            "phases_ms": phase_medians,
            "rounds": [{name: round(v, 1) for name, v in r.items()} for r in rounds]}


def environment(home: Path, src: Path) -> dict[str, str]:
    # PYTHONPATH puts this tree's `citadel` first, even where another is installed editable.
    env = {**os.environ, "CITADEL_HOME": str(home), "PYTHONPATH": str(src.resolve())}
    for name in [n for n in env if n.startswith("CITADEL_") and n != "CITADEL_HOME"]:
        del env[name]  # the default configuration
    return env


def table(title: str, results: dict[str, dict], rows: dict[str, list[str]]) -> None:
    print(f"\n| {title} | {' | '.join(results)} |")
    print(f"|---|{'---|' * len(results)}")
    for name, cells in rows.items():
        print(f"| {name} | {' | '.join(cells)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline-src", type=Path, default=None,
                        help="another checkout's src directory, measured in the same rounds")
    args = parser.parse_args()
    trees = {"now": ROOT / "src"}
    if args.baseline_src is not None:
        trees = {"baseline": args.baseline_src, **trees}
    tmp = Path(tempfile.mkdtemp(prefix="citadel-cold-"))
    try:
        home = tmp / "home"
        timed_process([sys.executable, "-m", "citadel", "ingest", "-q",
                       str(ROOT / "examples" / "support-kb")], environment(home, ROOT / "src"))
        runs: dict[str, list] = {name: [] for name in trees}
        for r in range(args.rounds):
            for name, src in trees.items():
                runs[name].append(one_round(environment(home, src)))
            print(f"round {r + 1}/{args.rounds}", file=sys.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    python_ms = statistics.median(f["python -c pass"] for rounds in runs.values()
                                  for f, _ in rounds)
    results = {name: {"src": str(trees[name]),
                      **summary([f for f, _ in rounds], [p for _, p in rounds], python_ms)}
               for name, rounds in runs.items()}
    table(f"median of {args.rounds}: ms (× python -c pass)", results, {
        step: [f"{r['median'][step]:,.0f} (×{r['ratio_to_python'][step]:g})"
               for r in results.values()] for step in STEPS}
        | {name: [f"{r['median'][name]:,.0f}" for r in results.values()]
           for name in (ASK_CPU, ASK_RSS)})
    table("phases of a cold ask: CPU ms (wall ms)", results, {
        phase: [f"{r['phases_ms'][phase]['cpu']:,} ({r['phases_ms'][phase]['wall']:,})"
                for r in results.values()]
        for phase in next(iter(results.values()))["phases_ms"]})
    out = ROOT / "benchmarks" / "results" / "cold_start.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"rounds": args.rounds, "question": QUESTION,
                               "python_ms": round(python_ms, 1), "trees": results},
                              indent=2) + "\n")
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    if sys.argv[1:] == [PHASES_CHILD]:
        phases()
    else:
        main()
