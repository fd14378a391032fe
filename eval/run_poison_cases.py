"""Run every case of eval/poison_cases.jsonl end to end and print the pass count.

    .venv/bin/python eval/run_poison_cases.py                       # default settings (MiniLM)
    .venv/bin/python eval/run_poison_cases.py --set authority_weight=0 --set freshness_weight=0
    .venv/bin/python eval/run_poison_cases.py --json results.json   # every answer, in full

Ingests the knowledge base (default: examples/support-kb) into a temporary CITADEL_HOME (or
--home), answers each question with `Engine.answer`, grades it with `citadel.poison.grade`,
prints one line per case and exits 1 if any case fails.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from citadel.config import Settings
from citadel.engine import Engine
from citadel.ingest.pipeline import ingest
from citadel.poison import grade, load_cases

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=Path, default=ROOT / "eval" / "poison_cases.jsonl")
    parser.add_argument("--kb", type=Path, default=ROOT / "examples" / "support-kb")
    parser.add_argument("--home", type=Path, default=None, help="default: a temporary folder")
    parser.add_argument("--set", dest="overrides", action="append", default=[],
                        metavar="NAME=VALUE", help="override a setting, e.g. authority_weight=0")
    parser.add_argument("--json", dest="json_out", type=Path, default=None)
    args = parser.parse_args(argv)
    overrides = dict(o.split("=", 1) for o in args.overrides)
    cases = load_cases(args.cases)
    with tempfile.TemporaryDirectory(prefix="citadel-poison-") as tmp:
        home = args.home or Path(tmp)
        settings = Settings.load(overrides={"home": home, **overrides})
        ingest([args.kb], settings, progress=False)
        engine = Engine.open(settings)
        rows = []
        try:
            for case in cases:
                answer = engine.answer(case.question)

                def flagged(chunk_id: str) -> bool:
                    chunk = engine.index.get_chunk(chunk_id)
                    return bool(chunk and chunk.suspicious)

                failures = grade(case, answer, flagged)
                rows.append({"id": case.id, "expected": case.expected, "passed": not failures,
                             "failures": failures, "answer": answer.model_dump(mode="json")})
                mark = "PASS" if not failures else "FAIL"
                print(f"{mark}  {case.id:38} {case.expected:26} {'; '.join(failures)}")
        finally:
            engine.close()
    passed = sum(r["passed"] for r in rows)
    print(f"\n{passed}/{len(rows)} poison cases passed "
          f"(settings: {overrides or 'defaults'}, retrieval config "
          f"{settings.retrieval_config_version})")
    if args.json_out:
        args.json_out.write_text(json.dumps(rows, indent=2, ensure_ascii=False))
    return 0 if passed == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
