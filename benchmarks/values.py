"""Cost and verdicts of comparing values: `citadel.text.values` against the comparators it
replaced, in one process.

    .venv/bin/python benchmarks/values.py [--before REV] [--repeat 5]

The comparators before (`facts.extract_facts` / `agree`, `span_conflicts.spans_agree`,
`answer_norm.normalise` / `answers_relation`) are loaded from git at `--before` (default:
the commit before `citadel/text/values.py` was added) under another package name, beside
today's, so both run on the same inputs in the same process:

1. **Import**: `citadel/text/values.py` on its own and text2num alone, each in a fresh
   interpreter, the best of `--repeat`.
2. **Per call** (best of `--repeat` rounds, microseconds): reading one short answer span
   (every text of the `tests/value_pairs.py` table), comparing two spans (every pair of the
   table), and extracting the facts of a sentence (every sentence of the demo knowledge
   base, `examples/support-kb`). Today's modules keep what they read (`lru_cache`): the
   caches are cleared before each round, and "read before" is the cost of a text read
   again (the same sentence checked by the next detector or the next question).
3. **Verdicts**: of the table's pairs (equal, different, incomparable), how many each
   comparator gets wrong.

Prints a Markdown table; writes benchmarks/results/values.json.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from tests.value_pairs import DIFFERENT, EQUAL, INCOMPARABLE  # noqa: E402

from citadel.answering import answer_norm, facts, span_conflicts  # noqa: E402
from citadel.text import values  # noqa: E402
from citadel.text.sentences import sentence_spans  # noqa: E402

OLD = "citadel_before"
_NORM = {"agree": "equal", "compatible": "equal", "conflict": "different",
         "unrelated": "incomparable"}


def load_before(rev: str) -> dict[str, types.ModuleType]:
    """The answering modules at `rev`, as `citadel_before.answering.<name>` (their imports
    of each other rewritten; everything else they import is today's)."""
    for package in (OLD, f"{OLD}.answering"):
        sys.modules[package] = types.ModuleType(package)
    loaded = {}
    for name in ("facts", "answer_norm", "conflicts", "span_conflicts"):
        source = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{rev}:src/citadel/answering/{name}.py"],
            check=True, capture_output=True, text=True).stdout
        source = source.replace("from citadel.answering.", f"from {OLD}.answering.")
        module = types.ModuleType(f"{OLD}.answering.{name}")
        sys.modules[module.__name__] = module
        exec(compile(source, f"{rev}:{name}.py", "exec"), module.__dict__)
        loaded[name] = module
    return loaded


_ALONE = """
import importlib.util, sys, time
import collections.abc, dataclasses, functools, re, typing  # loaded by any Citadel process
t0 = time.perf_counter()
spec = importlib.util.spec_from_file_location("values_alone", sys.argv[1])
module = sys.modules["values_alone"] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
t1 = time.perf_counter()
import text_to_num
print((t1 - t0) * 1e6)
"""


def import_us(runs: int) -> tuple[float, float]:
    """Microseconds to import `citadel/text/values.py` on its own (its patterns compiled
    and text2num loaded; importing the `citadel` package loads the whole engine) and
    text2num alone: the best of `runs` fresh interpreters each."""
    alone, lib = [], []
    for _ in range(runs):
        alone.append(float(subprocess.run(
            [sys.executable, "-c", _ALONE,
             str(ROOT / "src" / "citadel" / "text" / "values.py")],
            capture_output=True, text=True, check=True).stdout))
        out = subprocess.run([sys.executable, "-X", "importtime", "-c", "import text_to_num"],
                             capture_output=True, text=True, check=True).stderr
        line = [x for x in out.splitlines() if x.rstrip().endswith("| text_to_num")][-1]
        lib.append(float(line.split("|")[1]))
    return min(alone), min(lib)


def clear_caches() -> None:
    """Forget every value read so far: each round then reads its inputs afresh."""
    for cached in (values._values_of, values.is_number_word, answer_norm.normalise,
                   answer_norm.words_of):
        cached.cache_clear()


def per_call_us(fn: Callable[[object], object], inputs: list, repeat: int,
                cold: bool = True) -> float:
    """Best of `repeat` rounds over `inputs`: microseconds per call. `cold`: today's caches
    are cleared before each round (the inputs are distinct, so nothing is read twice);
    otherwise they hold every input already (a text read again)."""
    best = float("inf")
    for _ in range(repeat):
        if cold:
            clear_caches()
        else:
            for x in inputs:
                fn(x)
        t0 = time.perf_counter()
        for x in inputs:
            fn(x)
        best = min(best, (time.perf_counter() - t0) / len(inputs) * 1e6)
    return best


def demo_sentences() -> list[str]:
    out = []
    for path in sorted((ROOT / "examples" / "support-kb").glob("*.md")):
        text = path.read_text("utf-8")
        out += [text[s:e] for s, e in sentence_spans(text)
                if not text[s:e].lstrip().startswith("#")]
    return [re.sub(r"\s+", " ", s).strip() for s in out if s.strip()]


def facts_verdict(module: types.ModuleType, a: str, b: str) -> str:
    fa, fb = module.extract_facts(a), module.extract_facts(b)
    if len(fa) != 1 or len(fb) != 1 or not module.comparable(fa[0], fb[0]):
        return "incomparable"
    return "equal" if module.agree(fa[0], fb[0]) else "different"


def wrong(verdict: Callable[[str, str], str], pairs: list[tuple[str, str, str]]) -> int:
    return sum(verdict(a, b) != expected for expected, a, b in pairs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default=None,
                        help="a commit before values.py (default: the one before it was added)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rev = args.before or subprocess.run(
        ["git", "-C", str(ROOT), "log", "-1", "--format=%H", "--diff-filter=A", "--",
         "src/citadel/text/values.py"], check=True, capture_output=True, text=True,
    ).stdout.strip() + "^"
    before = load_before(rev)
    pairs = [(expected, a, b) for expected, rows in (
        ("equal", EQUAL), ("different", DIFFERENT), ("incomparable", INCOMPARABLE))
        for _, a, b in rows]
    spans = sorted({t for _, a, b in pairs for t in (a, b)})
    sentences = demo_sentences()
    for module in (facts, before["facts"]):  # warm up: imports, stemmer, regex caches
        for s in sentences:
            module.extract_facts(s)
    old_facts, old_norm, old_spans = (before["facts"], before["answer_norm"],
                                      before["span_conflicts"])
    cases = [  # what, before, after, inputs
        ("read one span", (old_norm.normalise, "answer_norm.normalise"),
         (values.read_value, "values.read_value"), spans),
        ("compare two spans", (lambda p: old_norm.answers_relation(p[1], p[2]),
                               "answer_norm.answers_relation"),
         (lambda p: values.compare_texts(p[1], p[2]), "values.compare_texts"), pairs),
        ("compare two spans", (lambda p: old_spans.spans_agree(p[1], p[2]),
                               "span_conflicts.spans_agree"),
         (lambda p: span_conflicts.spans_agree(p[1], p[2]), "span_conflicts.spans_agree"),
         pairs),
        ("facts of one demo sentence", (old_facts.extract_facts, "facts.extract_facts"),
         (facts.extract_facts, "facts.extract_facts"), sentences),
        ("values of one demo sentence", None, (values.find_values, "values.find_values"),
         sentences),
    ]
    rows = [(what, old[1] if old else "", new[1],
             per_call_us(old[0], inputs, args.repeat) if old else None,
             per_call_us(new[0], inputs, args.repeat),
             per_call_us(new[0], inputs, args.repeat, cold=False), len(inputs))
            for what, old, new, inputs in cases]
    verdicts = {  # comparator -> (pairs judged wrong before, after)
        "facts.agree": (wrong(lambda a, b: facts_verdict(old_facts, a, b), pairs),
                        wrong(lambda a, b: facts_verdict(facts, a, b), pairs)),
        "answer_norm.answers_relation": (
            wrong(lambda a, b: _NORM[old_norm.answers_relation(a, b)], pairs),
            wrong(lambda a, b: _NORM[answer_norm.answers_relation(a, b)], pairs)),
        # A yes/no comparator: only "different" must be False.
        "span_conflicts.spans_agree": (
            sum(old_spans.spans_agree(a, b) != (e != "different") for e, a, b in pairs),
            sum(span_conflicts.spans_agree(a, b) != (e != "different") for e, a, b in pairs)),
    }
    module_us, library_us = import_us(args.repeat)
    imports = {"values.py": module_us, "text_to_num": library_us}
    print(f"Import (fresh interpreter): values.py {module_us / 1000:.1f} ms (text2num "
          f"included); text2num alone {library_us / 1000:.1f} ms\n")
    print("| what | before | after | µs per call before | after | after, read before | "
          "inputs |")
    print("|---|---|---|---:|---:|---:|---:|")
    for what, old_name, new_name, old_us, new_us, warm_us, n in rows:
        old_text = f"{old_us:.1f}" if old_us is not None else ""
        old_code = f"`{old_name}`" if old_name else ""
        print(f"| {what} | {old_code} | `{new_name}` | {old_text} | {new_us:.1f} | "
              f"{warm_us:.1f} | {n} |")
    print("\n| comparator | pairs judged wrong before | after | of |\n|---|---:|---:|---:|")
    for name, (old_wrong, new_wrong) in verdicts.items():
        print(f"| `{name}` | {old_wrong} | {new_wrong} | {len(pairs)} |")
    out = ROOT / "benchmarks" / "results" / "values.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "before": rev, "imports_us": imports,
        "per_call_us": [{"what": w, "old": on, "new": nn, "before": o, "after": a,
                         "after_read_before": c, "inputs": n}
                        for w, on, nn, o, a, c, n in rows],
        "wrong_verdicts": {k: {"before": o, "after": a, "pairs": len(pairs)}
                           for k, (o, a) in verdicts.items()},
    }, indent=2))


if __name__ == "__main__":
    main()
