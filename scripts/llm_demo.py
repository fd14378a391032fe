"""Ask questions through Citadel with a real language model and count what the citation gate
did: citations attempted, verified, dropped (by reason), answers grounded, abstained,
degraded, retried, seconds per answer and the model's tokens/s. Used by scripts/llm-demo.sh
and `make llm-demo`.

    # a local model from its PyPI part packages, started in this process:
    python scripts/llm_demo.py --local qwen2.5-coder-1.5b --prompts v1 v2 --modes answer stream
    # also the eval suites through the same server (citadel eval in a subprocess):
    python scripts/llm_demo.py --local qwen2.5-coder-1.5b --prompts v2 --suite demo
    python scripts/llm_demo.py --local qwen2.5-coder-1.5b --prompts v2 --suite squad2 --limit 200
    # any server speaking the chat-completions protocol:
    python scripts/llm_demo.py --base-url http://127.0.0.1:8765/v1 --model NAME

Everything is written to --json-out (default: llm-demo-<time>.json in the current folder).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROMPTS = {
    "v1": ("grounded-v1", "grounded-strict-v1", "grounded-stream-v1"),
    "v2": ("grounded-v2", "grounded-strict-v2", "grounded-stream-v2"),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--local", metavar="MODEL",
                       help="start a local model (qwen2.5-coder-1.5b, qwen2.5-coder-0.5b)")
    where.add_argument("--base-url", help="an OpenAI-compatible server's /v1 URL")
    parser.add_argument("--model", help="the model name (with --base-url)")
    parser.add_argument("--api-key", default=os.environ.get("CITADEL_LLM_API_KEY"))
    parser.add_argument("--threads", type=int, default=0, help="local model threads (0: all)")
    parser.add_argument("--prompts", nargs="+", choices=sorted(PROMPTS), default=["v2"])
    parser.add_argument("--modes", nargs="+", choices=["answer", "stream"], default=["answer"])
    parser.add_argument("--suite", choices=["demo", "squad2"], default=None,
                        help="instead of the questions file: run `citadel eval --suite`")
    parser.add_argument("--limit", type=int, default=None, help="rows of the suite")
    parser.add_argument("--questions", type=Path, default=ROOT / "scripts/llm-demo-questions.txt")
    parser.add_argument("--kb", type=Path, default=ROOT / "examples/support-kb")
    parser.add_argument("--home", type=Path, default=None,
                        help="CITADEL_HOME to use (default: a fresh temporary one)")
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--json-out", type=Path, default=None)
    parser.add_argument("--quiet", action="store_true", help="only the summaries")
    args = parser.parse_args()
    if args.base_url and not args.model:
        parser.error("--base-url needs --model")

    home = args.home or Path(tempfile.mkdtemp(prefix="citadel-llm-demo-"))
    out = args.json_out or Path(f"llm-demo-{time.strftime('%Y%m%d-%H%M%S')}.json")
    server = None
    if args.local:
        from citadel.answering.generators.llama_server import LlamaServer
        from citadel.answering.generators.model_packages import (
            assemble,
            default_models_dir,
            get_model,
        )

        model = get_model(args.local)
        print(f"assembling and loading {model.name} …", flush=True)
        server = LlamaServer(assemble(default_models_dir(), model), alias=model.name,
                             threads=args.threads, metrics=True)
        base_url, model_name, api_key = server.base_url, model.name, server.api_key
        print(f"{model.name} on {base_url} with {server.threads} threads", flush=True)
    else:
        base_url, model_name, api_key = args.base_url, args.model, args.api_key
    runs = []
    try:
        for family in args.prompts:
            for mode in (["answer"] if args.suite else args.modes):
                before = server.metrics() if server else {}
                t0 = time.perf_counter()
                if args.suite:
                    summary = run_suite(args, home, base_url, model_name, api_key, family)
                else:
                    summary = run_questions(args, home, base_url, model_name, api_key, family,
                                            mode)
                summary["wall_seconds"] = round(time.perf_counter() - t0, 1)
                if server:
                    summary["model_tokens"] = token_rates(before, server.metrics())
                summary.update(model=model_name, prompts=family, mode=mode,
                               suite=args.suite or "llm-demo-questions")
                print_summary(summary)
                runs.append(summary)
                out.write_text(json.dumps({"runs": runs}, indent=2, ensure_ascii=False))
    finally:
        if server:
            server.close()
    print(f"\nwrote {out}")
    return 0


def settings_for(args, home: Path, base_url: str, model: str, api_key: str | None,
                 family: str):
    from citadel.config import Settings

    prompt, retry, stream = PROMPTS[family]
    return Settings(home=home, embedder=args.embedder, generator="openai",
                    llm_base_url=base_url, llm_model=model, llm_api_key=api_key,
                    llm_timeout=args.timeout, llm_max_retries=1, llm_prompt=prompt,
                    llm_retry_prompt=retry, llm_stream_prompt=stream)


def run_questions(args, home, base_url, model, api_key, family, mode) -> dict:
    from citadel.engine import Engine
    from citadel.ingest.pipeline import ingest

    settings = settings_for(args, home, base_url, model, api_key, family)
    questions = [q.strip() for q in args.questions.read_text().splitlines()
                 if q.strip() and not q.lstrip().startswith("#")]
    ingest([args.kb], settings, progress=False)
    engine = Engine.open(settings)
    rows = []
    try:
        for i, question in enumerate(questions, 1):
            t0 = time.perf_counter()
            first_delta = None
            if mode == "stream":
                answer = None
                for event in engine.stream(question):
                    if event.type == "delta" and first_delta is None:
                        first_delta = time.perf_counter() - t0
                    if event.type == "done":
                        answer = event.answer
            else:
                answer = engine.answer(question)
            seconds = time.perf_counter() - t0
            rows.append(row_of(question, answer, seconds, first_delta))
            if not args.quiet:
                status = ("grounded" if answer.grounded else
                          "degraded" if answer.degraded else "abstained")
                print(f"[{family} {mode} {i}/{len(questions)}] {status:9} {seconds:5.1f}s  "
                      f"{question}\n    {answer.answer}", flush=True)
                for c in answer.citations:
                    print(f'    [{c.chunk_id}] "{c.quote}"', flush=True)
    finally:
        engine.close()
    summary = summarize(rows)
    summary["rows"] = rows
    return summary


def row_of(question: str, answer, seconds: float, first_delta: float | None) -> dict:
    t = answer.trace
    return {
        "question": question, "seconds": round(seconds, 2),
        "first_delta_seconds": round(first_delta, 2) if first_delta else None,
        "answered_by": t.generator,  # the model, or e.g. the conflict composer
        "model_called": bool(t.attempts),
        "grounded": answer.grounded, "abstained": answer.abstained,
        "degraded": answer.degraded, "answer": answer.answer,
        "refusal_shown": answer.grounded and refusal(answer.answer),
        "citations": [{"chunk_id": c.chunk_id, "quote": c.quote} for c in answer.citations],
        "attempts": [a.model_dump() for a in t.attempts],
        "retry_reason": t.retry_reason,
        "dropped": [d.model_dump() for d in t.citations_dropped],
        "degraded_reasons": list(t.degraded_reasons),
    }


def refusal(text: str) -> bool:
    from citadel.answering.generators.structured_output import is_no_answer

    return is_no_answer(text)


def run_suite(args, home, base_url, model, api_key, family) -> dict:
    """`citadel eval --suite S` in a subprocess, pointed at this server; its rows give the
    citation counts (each response's trace holds the generation attempts)."""
    prompt, retry, stream = PROMPTS[family]
    out = home / f"eval-{args.suite}-{family}"
    env = {**os.environ, "CITADEL_HOME": str(home), "CITADEL_EMBEDDER": args.embedder,
           "CITADEL_GENERATOR": "openai", "CITADEL_LLM_BASE_URL": base_url,
           "CITADEL_LLM_MODEL": model, "CITADEL_LLM_TIMEOUT": str(args.timeout),
           "CITADEL_LLM_MAX_RETRIES": "1", "CITADEL_LLM_PROMPT": prompt,
           "CITADEL_LLM_RETRY_PROMPT": retry, "CITADEL_LLM_STREAM_PROMPT": stream,
           "PYTHONPATH": str(ROOT / "src")}
    if api_key:
        env["CITADEL_LLM_API_KEY"] = api_key
    command = [sys.executable, "-m", "citadel", "eval", "--suite", args.suite, "--out", str(out)]
    if args.limit:
        command += ["--limit", str(args.limit)]
    subprocess.run(command, env=env, check=True)
    results = json.loads((out / "results.json").read_text())
    rows = []
    for line in (out / "rows.jsonl").read_text().splitlines():
        r = json.loads(line)
        response = r["response"]
        t = response["trace"]
        rows.append({
            "question": r["question"], "grounded": response["grounded"],
            "abstained": response["abstained"], "degraded": response["degraded"],
            "answered_by": t["generator"], "model_called": bool(t.get("attempts")),
            "refusal_shown": response["grounded"] and refusal(response["answer"]),
            "citations": response["citations"], "attempts": t.get("attempts", []),
            "retry_reason": t.get("retry_reason"),
            "seconds": round(t.get("latencies_ms", {}).get("total", 0.0) / 1000, 2),
        })
    summary = summarize(rows)
    summary["metrics"] = results["metrics"]
    summary["eval_out"] = str(out)
    return summary


def summarize(rows: list[dict]) -> dict:
    attempts = [a for r in rows for a in r["attempts"]]
    dropped: Counter = Counter()
    for a in attempts:
        dropped.update(a["dropped"])
    called = [r for r in rows if r["model_called"]]
    return {
        "questions": len(rows),
        "model_called": len(called),
        "generation_attempts": len(attempts),
        "retried": sum(len(r["attempts"]) > 1 for r in rows),
        "retry_reasons": dict(Counter(r["retry_reason"] for r in rows if r["retry_reason"])),
        "citations_attempted": sum(a["citations_attempted"] for a in attempts),
        "citations_verified_by_gate": sum(a["citations_verified"] for a in attempts),
        "citations_shown": sum(len(r["citations"]) for r in rows),
        "dropped_by_reason": dict(dropped),
        "unparseable_attempts": sum((a["problem"] or "") == "unparseable" for a in attempts),
        "model_abstained_attempts": sum(a["abstained"] for a in attempts),
        "answers_grounded": sum(r["grounded"] for r in rows),
        "answers_grounded_by_the_model": sum(r["grounded"] and r["answered_by"].startswith(
            "openai") for r in rows),
        "answers_abstained": sum(r["abstained"] for r in rows),
        "answers_degraded": sum(r["degraded"] for r in rows),
        "refusals_shown_as_grounded": sum(r["refusal_shown"] for r in rows),
        "seconds_per_model_answer": (round(sum(r["seconds"] for r in called) / len(called), 1)
                                     if called else None),
    }


def token_rates(before: dict, after: dict) -> dict:
    def delta(name: str) -> float:
        return after.get(f"llamacpp:{name}", 0.0) - before.get(f"llamacpp:{name}", 0.0)

    prompt, prompt_s = delta("prompt_tokens_total"), delta("prompt_seconds_total")
    predicted, predicted_s = delta("tokens_predicted_total"), delta(
        "tokens_predicted_seconds_total")
    return {
        "prompt_tokens": int(prompt),
        "prompt_tokens_cached": int(delta("prompt_tokens_cached_total")),
        "prompt_tokens_per_second": round(prompt / prompt_s, 1) if prompt_s else None,
        "generated_tokens": int(predicted),
        "generated_tokens_per_second": round(predicted / predicted_s, 1) if predicted_s else None,
    }


def print_summary(s: dict) -> None:
    print(f"\n== {s['model']} prompts {s['prompts']} {s['mode']}() on {s['suite']}: "
          f"{s['questions']} questions, model called for {s['model_called']}, "
          f"{s['generation_attempts']} attempts ({s['retried']} retried) ==")
    if "metrics" in s:
        m = s["metrics"]
        keys = ("answer_correctness", "false_abstention_rate", "abstention_accuracy",
                "citation_integrity", "quote_validity", "answerable_correct",
                "unanswerable_abstained")
        print("eval metrics : " + ", ".join(f"{k} {m[k]:.3f}" for k in keys if k in m))
    print(f"citations attempted / passed the gate / shown: {s['citations_attempted']} / "
          f"{s['citations_verified_by_gate']} / {s['citations_shown']}")
    drops = {k: v for k, v in s["dropped_by_reason"].items() if k != "uncited_sentence"}
    print("dropped by the gate, by reason : "
          + (", ".join(f"{k} {v}" for k, v in sorted(drops.items())) or "none")
          + f"; uncited sentences {s['dropped_by_reason'].get('uncited_sentence', 0)}")
    print(f"unparseable {s['unparseable_attempts']}; retry reasons {s['retry_reasons'] or 'none'}")
    print(f"answers grounded / abstained / degraded: {s['answers_grounded']} / "
          f"{s['answers_abstained']} / {s['answers_degraded']} (grounded by the model: "
          f"{s['answers_grounded_by_the_model']}); refusals shown as grounded: "
          f"{s['refusals_shown_as_grounded']}")
    print(f"seconds per answer that called the model: {s['seconds_per_model_answer']}; "
          f"wall {s['wall_seconds']} s")
    if "model_tokens" in s:
        t = s["model_tokens"]
        print(f"model tokens: prompt {t['prompt_tokens']} ({t['prompt_tokens_cached']} cached) "
              f"at {t['prompt_tokens_per_second']}/s, generated {t['generated_tokens']} at "
              f"{t['generated_tokens_per_second']}/s")


if __name__ == "__main__":
    sys.exit(main())
