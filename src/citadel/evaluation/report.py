"""Writing a run's outputs (results.json, GROUNDED_EVAL.md, rows.jsonl, report.html) and
comparing two runs. Rendering only: every number comes from `EvalResults`."""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citadel.evaluation.results import EvalResults

MAX_LISTED_FAILURES = 25


@dataclass(frozen=True)
class MetricInfo:
    key: str
    layer: str
    label: str
    unit: str  # what one measured item is
    ratio: bool = True  # 0/1 per item, so "passed/total" is meaningful


METRICS: tuple[MetricInfo, ...] = (
    MetricInfo("recall_at_k", "retrieval", "recall@{k}", "question", ratio=False),
    MetricInfo("ndcg_at_10", "retrieval", "nDCG@10", "question", ratio=False),
    MetricInfo("mrr", "retrieval", "MRR@10", "question", ratio=False),
    MetricInfo("document_recall_at_k", "retrieval (documents)", "recall@{k}", "question",
               ratio=False),
    MetricInfo("document_ndcg_at_10", "retrieval (documents)", "nDCG@10", "question",
               ratio=False),
    MetricInfo("document_mrr", "retrieval (documents)", "MRR@10", "question", ratio=False),
    MetricInfo("citation_integrity", "citations", "integrity (membership)", "citation"),
    MetricInfo("quote_validity", "citations", "quote validity", "citation"),
    MetricInfo("claim_support", "citations", "claim support (precision)", "citation"),
    MetricInfo("citation_completeness", "citations", "completeness (recall)",
               "factual sentence"),
    MetricInfo("answer_correctness", "answers", "key facts present", "question"),
    MetricInfo("abstention_accuracy", "abstention", "abstained when unanswerable", "question"),
    MetricInfo("false_abstention_rate", "abstention", "abstained when answerable (lower is "
               "better)", "question"),
    MetricInfo("false_conflict", "conflicts", "answerable with one true answer in the KB: "
               "answered with a conflict (lower is better)", "question"),
    MetricInfo("span_f1", "answers", "answer span token F1 (SQuAD)", "question", ratio=False),
    MetricInfo("evidence_in_context", "retrieval (documents)", "gold paragraph in the context",
               "question"),
    MetricInfo("released_with_gold_in_context", "decision (scripted reader)",
               "released with the gold paragraph in the context", "question"),
    MetricInfo("withheld_before_model", "decision (scripted reader)",
               "withheld before the reader, gold paragraph in the context (lower is better)",
               "question"),
    MetricInfo("unanswerable_stopped", "decision (scripted reader)",
               "unanswerable stopped (abstained or conflict)", "question"),
    MetricInfo("decision_accuracy", "decision", "right decision (answer / abstain / "
               "conflict)", "question"),
    MetricInfo("decision_answer", "decision", "expected an answer: answered right", "question"),
    MetricInfo("decision_abstain", "decision", "expected an abstention: abstained, citing "
               "nothing", "question"),
    MetricInfo("decision_conflict", "decision", "expected a conflict: flagged, every side "
               "stated", "question"),
    MetricInfo("rewrite_right", "conversation", "follow-up made to stand alone right",
               "follow-up turn"),
    MetricInfo("poison_pass_rate", "poison", "cases passed", "case"),
    MetricInfo("conflict_flagged", "conflicts", "conflict flagged, both sides cited", "case"),
    MetricInfo("fooled", "conflicts", "swapped fact stated without a conflict (lower is "
               "better)", "case"),
    MetricInfo("conflict_raised", "conflicts", "any conflict raised", "case"),
    MetricInfo("both_in_context", "conflicts", "both sides in the context", "case"),
    MetricInfo("abstained", "abstention", "abstained", "case"),
    MetricInfo("claim_scorer_accuracy_vs_contradict", "claim scorer", "balanced accuracy, "
               "SUPPORT vs CONTRADICT (held out)", "pair", ratio=False),
    MetricInfo("claim_scorer_accuracy_vs_random", "claim scorer", "balanced accuracy, "
               "SUPPORT vs random sentence (held out)", "pair", ratio=False),
)
INFO = {m.key: m for m in METRICS}
LOWER_IS_BETTER = {"false_abstention_rate", "fooled", "withheld_before_model",
                   "false_conflict"}


def _info(key: str) -> MetricInfo:
    return INFO.get(key, MetricInfo(key, "other", key, "item", ratio=False))


def _ordered(keys: Sequence[str]) -> list[str]:
    order = {m.key: i for i, m in enumerate(METRICS)}
    return sorted(keys, key=lambda k: (order.get(k, len(order)), k))


def measured(results: EvalResults, key: str) -> str:
    """'7/10 cases' for a ratio, 'mean over 45 questions' otherwise."""
    info = _info(key)
    count = results.counts.get(key, {})
    n = int(count.get("n", 0))
    unit = info.unit + ("" if n == 1 else "s")
    if info.ratio:
        return f"{round(count.get('sum', 0))}/{n} {unit}"
    return f"mean over {n} {unit}"


def _label(results: EvalResults, key: str) -> str:
    return _info(key).label.replace("{k}", str(results.config.get("k", "k")))


def _run_rows(results: EvalResults) -> list[tuple[str, str]]:
    def show(value: object) -> str:
        return ", ".join(value) if isinstance(value, list) else str(value or "-")

    d = results.dataset
    return [
        ("suite", results.suite),
        ("dataset", f"{d.get('name')} {d.get('version')} ({d.get('rows')} rows, "
                    f"sha256 {str(d.get('sha256', ''))[:12]}, {d.get('path')})"),
        ("snapshot", show(results.snapshot_id)),
        ("backend / strategy", f"{show(results.backend)} / {show(results.strategy)}"),
        ("generator / prompt", f"{show(results.generator)} / {show(results.prompt_version)}"),
        ("retrieval config", show(results.retrieval_config_version)),
        ("embedder", results.embedder),
        ("claim scorer", f"{results.config.get('claim_scorer')} (threshold "
                         f"{results.config.get('claim_threshold')})"
                         + (f"; agreement with SciFact held-out labels "
                            f"{results.config['claim_scorer_agreement']}"
                            if results.config.get("claim_scorer_agreement") else "")),
        ("git commit", results.git_commit),
        ("run", f"{results.created_at}, {results.seconds} s"),
    ]


def render_markdown(results: EvalResults) -> str:
    lines = [f"# Grounded evaluation: {results.suite}", "", "| | |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in _run_rows(results)]
    lines += ["", "## Metrics", "",
              "Each layer is scored on its own; no number here blends them.", "",
              "| layer | metric | value | measured | failures |", "|---|---|---|---|---|"]
    for key in _ordered(list(results.metrics)):
        info = _info(key)
        failures = len(results.failures.get(key, []))
        lines.append(f"| {info.layer} | {_label(results, key)} | {results.metrics[key]:.3f} | "
                     f"{measured(results, key)} | {failures or ''} |")
    if results.breakdown:
        lines += ["", "## By kind", "", "| kind | metric | value |", "|---|---|---|"]
        for kind, metrics in results.breakdown.items():
            lines += [f"| {kind} | {_label(results, key)} | {metrics[key]:.3f} |"
                      for key in _ordered(list(metrics))]
    calibration = results.model_extra.get("claim_support_calibration") if (
        results.model_extra) else None
    if calibration:
        lines += ["", "## Claim scorer calibration (SciFact rationales)", "",
                  "Threshold chosen on even claim ids, accuracy measured on odd ones.", "",
                  "| task | threshold | held-out accuracy | balanced | majority baseline | "
                  "pairs (+/-) |", "|---|---|---|---|---|---|"]
        for task, r in calibration.items():
            for name, which in (("held_out_at_scorer_threshold", "scorer_threshold"),
                                ("held_out_at_calibrated_threshold", "calibrated_threshold")):
                a = r[name]
                lines.append(f"| {task} | {r[which]:.3f} ({which.split('_')[0]}) | "
                             f"{a['accuracy']:.3f} | "
                             f"{a['balanced_accuracy']:.3f} | {a['majority_baseline']:.3f} | "
                             f"{a['n_positive']}/{a['n_negative']} |")
    lines += _decisions_markdown(results)
    lines += ["", "## Failures", ""]
    if not results.failures:
        lines.append("None.")
    for key in _ordered(list(results.failures)):
        items = results.failures[key]
        lines += [f"### {key}: {measured(results, key)}, {len(items)} failed", ""]
        lines += [f"- {_one_line(item)}" for item in items[:MAX_LISTED_FAILURES]]
        if len(items) > MAX_LISTED_FAILURES:
            lines.append(f"- ... and {len(items) - MAX_LISTED_FAILURES} more in results.json")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


# --- the support suite's decisions and misses (results.json `decisions`, `misses`) ----------

DECISION_GROUPS = (("overall", "overall"), ("expect", "expectation"),
                   ("category", "category"), ("kind", "chain kind"), ("kb", "knowledge base"))


def _extra(results: EvalResults, key: str) -> Any:
    return (results.model_extra or {}).get(key)


def _decision_rows(results: EvalResults) -> list[tuple[str, str, str]]:
    """(group, name, "right/total (value)") for every group of the run's decisions, then of
    its follow-up rewrites (the conversations suite)."""
    rows = []
    for extra, prefix in (("decisions", ""), ("rewrites", "rewrite by ")):
        counts = _extra(results, extra) or {}
        for group, title in DECISION_GROUPS:
            for name, c in counts.get(group, {}).items():
                right, total = c["right"], c["total"]
                rows.append((prefix + title, name, f"{right}/{total} ({right / total:.3f})"
                             if total else "0/0"))
    return rows


def _miss_fields(miss: dict[str, Any]) -> list[tuple[str, str]]:
    verdict = miss.get("verdict")
    if isinstance(verdict, dict):
        verdict = ": ".join(str(verdict[k]) for k in ("stage", "reason") if verdict.get(k)) \
            or json.dumps(verdict, ensure_ascii=False)
    fields = [
        ("question", miss["question"]), ("answered as", miss.get("standalone", "")),
        ("labelled as", miss.get("labelled", "")), ("expected", miss["expected"]),
        ("came back", f"{miss['outcome']}: {miss['answer']}"),
        ("cited", ", ".join(miss["cited"]) or "nothing"),
        ("conflict sides", " vs ".join(miss["conflict_sides"])),
        ("why wrong", "; ".join(miss["reasons"])), ("verdict", verdict or ""),
        ("note", miss.get("note", "")),
    ]
    return [(k, v) for k, v in fields if v]


def _decisions_markdown(results: EvalResults) -> list[str]:
    rows = _decision_rows(results)
    if not rows:
        return []
    lines = ["", "## Decisions", "", "| by | which | right/total |", "|---|---|---|"]
    lines += [f"| {g} | {n} | {v} |" for g, n, v in rows]
    misses = _extra(results, "misses") or []
    lines += ["", f"## Misses ({len(misses)})", ""]
    for m in misses:
        lines += [f"### {m['id']} ({m['kb']}, {m['category']})", ""]
        lines += [f"- {k}: {' '.join(v.split())}" for k, v in _miss_fields(m)]
        lines.append("")
    if not misses:
        lines.append("None.")
    return lines


def _decisions_html(results: EvalResults) -> str:
    rows = _decision_rows(results)
    if not rows:
        return ""
    table = "".join(f"<tr><td>{html.escape(g)}</td><td>{html.escape(n)}</td>"
                    f"<td class=v>{html.escape(v)}</td></tr>" for g, n, v in rows)
    misses = _extra(results, "misses") or []
    listed = "".join(
        f"<h3>{html.escape(m['id'])} ({html.escape(m['kb'])}, {html.escape(m['category'])})"
        "</h3><table>" + "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>"
                                 for k, v in _miss_fields(m)) + "</table>"
        for m in misses)
    return ("<h2>Decisions</h2><table><tr><th>by</th><th>which</th><th>right/total</th></tr>"
            f"{table}</table><h2>Misses ({len(misses)})</h2>{listed or '<p>None.</p>'}")


def _one_line(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def render_html(results: EvalResults) -> str:
    """A self-contained page: run details and one bar per metric (no plotting library)."""
    rows = []
    for key in _ordered(list(results.metrics)):
        value = results.metrics[key]
        bad = key in LOWER_IS_BETTER
        colour = "#c0392b" if (value < 1.0 and key in ("citation_integrity", "quote_validity")) \
            else ("#e67e22" if bad else "#2e86c1")
        rows.append(
            f"<tr><td>{html.escape(_info(key).layer)}</td>"
            f"<td>{html.escape(_label(results, key))}</td>"
            f"<td class=v>{value:.3f}</td>"
            f"<td><svg width=300 height=14><rect width=300 height=14 fill=#eee></rect>"
            f"<rect width={300 * max(0.0, min(1.0, value)):.1f} height=14 fill={colour}></rect>"
            f"</svg></td><td>{html.escape(measured(results, key))}</td></tr>"
        )
    info = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>"
                   for k, v in _run_rows(results))
    failures = "".join(
        f"<h3>{html.escape(key)} ({len(items)})</h3><ul>"
        + "".join(f"<li>{html.escape(i)}</li>" for i in items[:MAX_LISTED_FAILURES]) + "</ul>"
        for key, items in results.failures.items()
    )
    return (
        "<!DOCTYPE html><html><head><meta charset=utf-8>"
        f"<title>Citadel eval: {html.escape(results.suite)}</title><style>"
        "body{font-family:sans-serif;margin:2em;max-width:70em}td,th{padding:2px 8px;"
        "text-align:left}td.v{text-align:right;font-variant-numeric:tabular-nums}"
        "</style></head><body>"
        f"<h1>Citadel evaluation: {html.escape(results.suite)}</h1><table>{info}</table>"
        "<h2>Metrics (each layer on its own)</h2><table><tr><th>layer</th><th>metric</th>"
        f"<th>value</th><th></th><th>measured</th></tr>{''.join(rows)}</table>"
        f"{_decisions_html(results)}<h2>Failures</h2>{failures or '<p>None.</p>'}</body></html>\n"
    )


def write_outputs(out: Path, results: EvalResults, rows: Sequence[dict[str, Any]]) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "results.json": results.model_dump_json(indent=2) + "\n",
        "GROUNDED_EVAL.md": render_markdown(results),
        "report.html": render_html(results),
        "rows.jsonl": "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
    }
    written = []
    for name, text in paths.items():
        (out / name).write_text(text, "utf-8")
        written.append(out / name)
    return written


def summary_line(results: EvalResults) -> str:
    """One line per metric for the terminal: 'citation_integrity 1.000 (57/57 citations)'."""
    return "\n".join(
        f"  {key:<36} {results.metrics[key]:.3f}  ({measured(results, key)})"
        for key in _ordered(list(results.metrics))
    )


def compare(a: EvalResults, b: EvalResults, a_name: str = "A", b_name: str = "B") -> str:
    """A table of metric deltas (B - A), and what differs in how the two runs were made."""
    keys = _ordered(sorted(set(a.metrics) | set(b.metrics)))
    width = max([len(k) for k in keys] + [6])
    lines = [f"{'metric':<{width}}  {'A':>7}  {'B':>7}  {'delta':>7}"]
    for key in keys:
        va, vb = a.metrics.get(key), b.metrics.get(key)
        if va is None or vb is None:
            delta = "     n/a"
        else:
            d = vb - va
            worse = d > 0 if key in LOWER_IS_BETTER else d < 0
            delta = f"{d:+8.3f}" + (" worse" if worse and abs(d) > 1e-9 else "")
        fmt = lambda v: f"{v:7.3f}" if v is not None else "      -"  # noqa: E731
        lines.append(f"{key:<{width}}  {fmt(va)}  {fmt(vb)}  {delta}")
    notes = []
    for field_name in ("suite", "snapshot_id", "backend", "strategy", "generator",
                       "prompt_version", "retrieval_config_version", "embedder", "git_commit"):
        va, vb = getattr(a, field_name), getattr(b, field_name)
        if va != vb:
            notes.append(f"  {field_name}: {va} -> {vb}")
    for key in sorted(set(a.config) | set(b.config)):
        if a.config.get(key) != b.config.get(key):
            notes.append(f"  config.{key}: {a.config.get(key)} -> {b.config.get(key)}")
    if a.dataset.get("version") != b.dataset.get("version") or (
        a.dataset.get("sha256") != b.dataset.get("sha256")
    ):
        notes.append(f"  dataset: {a.dataset.get('version')} ({str(a.dataset.get('sha256'))[:8]})"
                     f" -> {b.dataset.get('version')} ({str(b.dataset.get('sha256'))[:8]}): "
                     "different questions, deltas are not like for like")
    header = [f"A = {a_name}", f"B = {b_name}", ""]
    return "\n".join(header + lines + (["", "Differences in how the runs were made:", *notes]
                                        if notes else []))
