"""Ask the demo questions through Citadel with the OpenAI-compatible generator and count
what the citation gate did: citations attempted, verified, dropped (by reason), answers
grounded, abstained, degraded, retried. Used by scripts/llm-demo.sh; any server speaking the
chat-completions protocol works:

    python scripts/llm_demo.py --base-url http://127.0.0.1:8765/v1 --model smollm2 \
        [--questions scripts/llm-demo-questions.txt] [--home DIR] [--json-out FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--questions", type=Path, default=ROOT / "scripts/llm-demo-questions.txt")
    parser.add_argument("--kb", type=Path, default=ROOT / "examples/support-kb")
    parser.add_argument("--home", type=Path, default=None,
                        help="CITADEL_HOME to use (default: a fresh temporary one)")
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--json-mode", default="auto")
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--json-out", type=Path, default=None)
    parser.add_argument("--stream", action="store_true",
                        help="use Engine.stream (sentence-streamed answers) instead of answer()")
    args = parser.parse_args()

    from citadel.config import Settings
    from citadel.engine import Engine
    from citadel.ingest.pipeline import ingest

    home = args.home or Path(tempfile.mkdtemp(prefix="citadel-llm-demo-"))
    settings = Settings(home=home, embedder=args.embedder, generator="openai",
                        llm_base_url=args.base_url, llm_model=args.model,
                        llm_json_mode=args.json_mode, llm_timeout=args.timeout,
                        llm_max_retries=1)
    questions = [q.strip() for q in args.questions.read_text().splitlines()
                 if q.strip() and not q.lstrip().startswith("#")]
    ingest([args.kb], settings, progress=False)
    engine = Engine.open(settings)
    rows = []
    try:
        for i, question in enumerate(questions, 1):
            t0 = time.perf_counter()
            first_delta = None
            if args.stream:
                answer = None
                for event in engine.stream(question):
                    if event.type == "delta" and first_delta is None:
                        first_delta = time.perf_counter() - t0
                    if event.type == "done":
                        answer = event.answer
            else:
                answer = engine.answer(question)
            seconds = time.perf_counter() - t0
            t = answer.trace
            rows.append({
                "question": question, "seconds": round(seconds, 1),
                "first_delta_seconds": round(first_delta, 1) if first_delta else None,
                "answered_by": t.generator,  # the model, or e.g. the conflict composer
                "grounded": answer.grounded, "abstained": answer.abstained,
                "degraded": answer.degraded, "answer": answer.answer,
                "citations": [{"chunk_id": c.chunk_id, "quote": c.quote}
                              for c in answer.citations],
                "attempts": [a.model_dump() for a in t.attempts],
                "retry_reason": t.retry_reason,
                "dropped": [d.model_dump() for d in t.citations_dropped],
                "degraded_reasons": list(t.degraded_reasons),
            })
            status = ("grounded" if answer.grounded else
                      "degraded" if answer.degraded else "abstained")
            print(f"[{i}/{len(questions)}] {status:9} {seconds:5.1f}s  {question}", flush=True)
            print(f"    {answer.answer}", flush=True)
            for c in answer.citations:
                print(f'    [{c.chunk_id}] "{c.quote}"', flush=True)
    finally:
        engine.close()

    summary = summarize(rows)
    print_summary(summary, args.model + (" (streamed)" if args.stream else ""))
    if args.json_out:
        args.json_out.write_text(json.dumps({"summary": summary, "rows": rows}, indent=2))
    return 0


def summarize(rows: list[dict]) -> dict:
    attempts = [a for r in rows for a in r["attempts"]]
    dropped = Counter()
    for a in attempts:
        dropped.update(a["dropped"])
    return {
        "questions": len(rows),
        "generation_attempts": len(attempts),
        "retried": sum(len(r["attempts"]) > 1 for r in rows),
        "retry_reasons": dict(Counter(r["retry_reason"] for r in rows if r["retry_reason"])),
        "citations_attempted": sum(a["citations_attempted"] for a in attempts),
        "citations_verified_by_gate": sum(a["citations_verified"] for a in attempts),
        "citations_shown": sum(len(r["citations"]) for r in rows),
        "dropped_by_reason": dict(dropped),
        "unparseable_attempts": sum(a["problem"] == "unparseable" for a in attempts),
        "model_abstained_attempts": sum(a["abstained"] for a in attempts),
        "answers_grounded": sum(r["grounded"] for r in rows),
        "answers_grounded_by_the_model": sum(r["grounded"] and r["answered_by"].startswith(
            "openai") for r in rows),
        "answers_abstained": sum(r["abstained"] for r in rows),
        "answers_degraded": sum(r["degraded"] for r in rows),
    }


def print_summary(s: dict, model: str) -> None:
    print(f"\n== {model}: {s['questions']} questions, {s['generation_attempts']} generation "
          f"attempts ({s['retried']} questions retried) ==")
    print(f"citations attempted by the model : {s['citations_attempted']}")
    print(f"  passed the gate                : {s['citations_verified_by_gate']}")
    print(f"  shown to the user              : {s['citations_shown']}")
    citation_drops = {k: v for k, v in s["dropped_by_reason"].items() if k != "uncited_sentence"}
    print("  dropped by the gate, by reason : "
          + (", ".join(f"{k} {v}" for k, v in sorted(citation_drops.items())) or "none"))
    print(f"sentences dropped as uncited     : {s['dropped_by_reason'].get('uncited_sentence', 0)}")
    print(f"unparseable replies              : {s['unparseable_attempts']}")
    print(f"retry reasons                    : {s['retry_reasons'] or 'none'}")
    print(f"answers grounded / abstained / degraded: {s['answers_grounded']} / "
          f"{s['answers_abstained']} / {s['answers_degraded']} (grounded by the model: "
          f"{s['answers_grounded_by_the_model']}; the rest by Citadel's conflict composer)")


if __name__ == "__main__":
    sys.exit(main())
