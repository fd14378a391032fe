"""The reader's written training data: check it, sample it blind, measure agreement, card it.

    python scripts/reader_data.py validate training/data/*.jsonl          # exit 1 on errors
    python scripts/reader_data.py validate --clean OUT_DIR FILES...       # keep valid records
    python scripts/reader_data.py sample --n 300 --out BLIND --key KEY FILES...
    python scripts/reader_data.py agreement --key KEY --relabel RELABEL [--drop DROP]
    python scripts/reader_data.py card --agreement AGREEMENT.json FILES...  # DATA_CARD.md

Records follow the briefs in `training/briefs/` (passages-v1, claims-v1, relabel-v1). Every
check is about the record alone or the whole set (duplicate passages, label balance); the
agreement of a second, blind writer is what says the labels can be trusted.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOMAINS = {"support/shop", "support/software", "support/services", "support/utilities",
           "support/health", "support/travel", "news", "encyclopedic", "manual", "policy"}
FORMATS = {"prose", "list", "table", "faq", "headed", "mixed"}
ANSWERED = {"direct", "paraphrase", "far-paraphrase", "yes-no", "list-item", "whole-list",
            "table-cell", "negation", "number", "date", "time", "person", "place"}
UNANSWERED = {"other-entity", "other-variant", "other-attribute", "other-number", "other-date",
              "negation", "antonym", "missing-list-item", "condition-not-met",
              "period-not-covered", "topic-absent"}
CLAIM_KINDS = {
    "supported": {"verbatim", "paraphrase", "equal-value", "summary", "yes-no"},
    "contradicted": {"changed-number", "changed-unit", "changed-entity", "negated", "antonym",
                     "changed-condition", "changed-date"},
    "not-enough-info": {"other-attribute", "other-variant", "overgeneralised", "added-detail",
                        "missing-list-item"},
}
PASSAGE_WORDS = (40, 260)  # the brief asks 60-220; a little slack before it is an error
QUESTIONS = (4, 12)  # the brief asks 6-10


@dataclass
class Report:
    errors: list[str] = field(default_factory=list)
    kept: list[dict] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)


def read_jsonl(path: Path) -> Iterator[tuple[int, dict | None, str | None]]:
    for n, line in enumerate(path.read_text("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            yield n, None, f"not JSON ({exc.msg})"
            continue
        yield n, record, None if isinstance(record, dict) else "not a JSON object"


def _squash(text: str) -> str:
    return re.sub(r"\W+", " ", text.lower()).strip()


def passage_problems(r: dict) -> list[str]:
    """What is wrong with one passages-v1 record (empty: nothing)."""
    problems = []
    for key in ("id", "domain", "format", "title", "passage", "questions"):
        if key not in r:
            problems.append(f"no {key}")
    if problems:
        return problems
    passage = r["passage"]
    if r["domain"] not in DOMAINS:
        problems.append(f"unknown domain {r['domain']!r}")
    if r["format"] not in FORMATS:
        problems.append(f"unknown format {r['format']!r}")
    words = len(passage.split())
    if not PASSAGE_WORDS[0] <= words <= PASSAGE_WORDS[1]:
        problems.append(f"passage of {words} words")
    qs = r["questions"]
    if not isinstance(qs, list) or not QUESTIONS[0] <= len(qs) <= QUESTIONS[1]:
        return [*problems, "questions: not a list of 4-12"]
    seen = set()
    for i, q in enumerate(qs):
        where = f"question {i}"
        if not isinstance(q, dict) or not str(q.get("q", "")).strip():
            problems.append(f"{where}: no question text")
            continue
        if _squash(q["q"]) in seen:
            problems.append(f"{where}: asked twice")
        seen.add(_squash(q["q"]))
        label, kind = q.get("label"), q.get("kind")
        if label == "answered":
            if kind not in ANSWERED:
                problems.append(f"{where}: unknown answered kind {kind!r}")
            if not q.get("answer") or q["answer"] not in passage:
                problems.append(f"{where}: answer not copied exactly from the passage")
        elif label == "unanswered":
            if kind not in UNANSWERED:
                problems.append(f"{where}: unknown unanswered kind {kind!r}")
            if q.get("near") and q["near"] not in passage:
                problems.append(f"{where}: near not copied exactly from the passage")
        else:
            problems.append(f"{where}: label {label!r}")
    return problems


def claim_problems(r: dict) -> list[str]:
    problems = [f"no {k}" for k in ("id", "domain", "quote", "claim", "label", "kind")
                if not r.get(k)]
    if problems:
        return problems
    if r["domain"] not in DOMAINS:
        problems.append(f"unknown domain {r['domain']!r}")
    kinds = CLAIM_KINDS.get(r["label"])
    if kinds is None:
        problems.append(f"label {r['label']!r}")
    elif r["kind"] not in kinds:
        problems.append(f"unknown {r['label']} kind {r['kind']!r}")
    return problems


def validate(paths: Iterable[Path]) -> Report:
    report = Report()
    passages: dict[str, str] = {}
    ids: set[str] = set()
    for path in paths:
        for n, record, error in read_jsonl(path):
            where = f"{path.name}:{n}"
            if error:
                report.errors.append(f"{where}: {error}")
                continue
            brief = record.get("brief", "")
            problems = (passage_problems(record) if brief.startswith("passages")
                        else claim_problems(record) if brief.startswith("claims")
                        else [f"unknown brief {brief!r}"])
            if record.get("id") in ids:
                problems.append(f"duplicate id {record['id']}")
            text = record.get("passage") or record.get("quote", "") + "|" + record.get("claim", "")
            digest = hashlib.sha256(_squash(text).encode()).hexdigest()
            if digest in passages:
                problems.append(f"same text as {passages[digest]}")
            if problems:
                report.errors.extend(f"{where} ({record.get('id')}): {p}" for p in problems)
                continue
            ids.add(record["id"])
            passages[digest] = record["id"]
            report.kept.append(record)
            if brief.startswith("passages"):
                report.counts["passages"] += 1
                report.counts[f"domain:{record['domain']}"] += 1
                for q in record["questions"]:
                    report.counts[f"{q['label']}"] += 1
                    report.counts[f"{q['label']}:{q['kind']}"] += 1
            else:
                report.counts["claims"] += 1
                report.counts[f"claim:{record['label']}"] += 1
                report.counts[f"claim:{record['label']}:{record['kind']}"] += 1
    return report


def sample(records: list[dict], n: int, seed: int) -> tuple[list[dict], list[dict]]:
    """A blind sample (no labels, shuffled) and its key."""
    items = []
    for r in records:
        if "questions" in r:
            for i, q in enumerate(r["questions"]):
                items.append(({"id": r["id"], "qi": i, "passage": r["passage"],
                               "title": r["title"], "q": q["q"]},
                              {"id": r["id"], "qi": i, "label": q["label"],
                               "answer": q.get("answer")}))
        else:
            items.append(({"id": r["id"], "quote": r["quote"], "claim": r["claim"]},
                          {"id": r["id"], "label": r["label"]}))
    rng = random.Random(seed)
    rng.shuffle(items)
    picked = items[:n]
    return [b for b, _ in picked], [k for _, k in picked]


def _key(item: dict) -> tuple:
    return (item["id"], item.get("qi"))


def agreement(key: list[dict], relabel: list[dict]) -> dict:
    """Raw agreement and Cohen's kappa over the items both labelled (`unsure` counts as a
    disagreement: the item is dropped either way)."""
    theirs = {_key(r): r.get("label") for r in relabel}
    pairs = [(k["label"], theirs[_key(k)]) for k in key if _key(k) in theirs]
    if not pairs:
        raise SystemExit("no item of the key was re-labelled")
    agree = sum(a == b for a, b in pairs)
    labels = sorted({a for a, _ in pairs} | {b for _, b in pairs})
    n = len(pairs)
    expected = sum((sum(a == lab for a, _ in pairs) / n) * (sum(b == lab for _, b in pairs) / n)
                   for lab in labels)
    observed = agree / n
    kappa = (observed - expected) / (1 - expected) if expected < 1 else 1.0
    disagreements = [{"id": k["id"], "qi": k.get("qi"), "label": k["label"],
                      "relabel": theirs[_key(k)]} for k in key
                     if _key(k) in theirs and theirs[_key(k)] != k["label"]]
    return {"items": n, "agree": agree, "agreement": round(observed, 4),
            "kappa": round(kappa, 4), "disagreements": disagreements}


def dropped(paths: Iterable[Path]) -> set[tuple[str, int | None]]:
    """The items a second writer labelled otherwise, from agreement files."""
    return {(d["id"], d.get("qi")) for path in paths
            for d in json.loads(path.read_text("utf-8"))["disagreements"]}


def without(records: list[dict], drop: set[tuple[str, int | None]]) -> list[dict]:
    """The records less the dropped items: a question of a passage, or a whole claim pair
    (a passage left with fewer than the brief's minimum questions stays: its other
    questions were not disputed)."""
    out = []
    for r in records:
        if "questions" in r:
            qs = [q for i, q in enumerate(r["questions"]) if (r["id"], i) not in drop]
            out.append({**r, "questions": qs})
        elif (r["id"], None) not in drop:
            out.append(r)
    return out


def card(report: Report, agreement_figures: list[dict], files: list[Path]) -> str:
    c = report.counts
    answered = {k.split(":", 1)[1]: v for k, v in c.items() if k.startswith("answered:")}
    unanswered = {k.split(":", 1)[1]: v for k, v in c.items() if k.startswith("unanswered:")}
    claims = {k.split(":", 1)[1]: v for k, v in c.items() if k.count(":") == 2
              and k.startswith("claim:")}
    domains = {k.split(":", 1)[1]: v for k, v in c.items() if k.startswith("domain:")}

    def table(title: str, rows: dict) -> str:
        lines = [f"| {title} | count |", "|---|---|"]
        lines += [f"| {k} | {v} |" for k, v in sorted(rows.items(), key=lambda kv: -kv[1])]
        return "\n".join(lines)

    agree = "\n".join(
        f"- {a['agree']} of {a['items']} sampled items ({a['agreement']:.1%}), Cohen's kappa "
        f"{a['kappa']:.3f}"
        + (f", sampled from {', '.join(a['sampled_from'])}" if a.get("sampled_from") else "")
        + f"; the {len(a['disagreements'])} items labelled otherwise are dropped from training"
        for a in agreement_figures) or "not measured yet"
    return f"""# Data card: the reader's written training data

Written for this project by writers following the briefs in `training/briefs/`
(`passages-v1`, `claims-v1`), checked by `scripts/reader_data.py validate`, and re-labelled
blind on a sample by a second writer (`relabel-v1`). All content is invented: businesses,
people, places, prices and events are fictional. No writer saw an evaluation set (SQuAD
development articles, RGB, the support evaluation questions).

Licence: written for this project, CC0-1.0 (like the project's other written data).

Use: `scripts/train_reader.py --written` trains on it beside SQuAD and SciFact. Measured once
(1 epoch, 2026-12-08): better on support questions, worse on every held-out set nobody wrote
it for, so the shipped reader is trained without it (docs/answering.md, "The reader, second
round").

Files: {", ".join(f"`{p.name}`" for p in files)}

## Size

- passages: {c['passages']}, with {c['answered']} answered and {c['unanswered']} unanswered
  (near-miss) questions;
- quote-claim pairs: {c['claims']} ({c['claim:supported']} supported, {c['claim:contradicted']}
  contradicted, {c['claim:not-enough-info']} not enough information).

## Agreement (a second writer, blind, on samples)

{agree}

## By domain

{table("domain", domains)}

## Answered questions, by kind

{table("kind", answered)}

## Unanswered questions, by why

{table("why", unanswered)}

## Claims, by label and kind

{table("label:kind", claims)}
"""


def _files(args: list[str]) -> list[Path]:
    paths = [Path(a) for a in args]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise SystemExit(f"no such file: {', '.join(missing)}")
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    v = sub.add_parser("validate", help="check files; exit 1 on any error")
    v.add_argument("files", nargs="+")
    v.add_argument("--clean", type=Path, help="write only the valid records here, per file")
    v.add_argument("--drop", type=Path, action="append", default=[],
                   help="an agreement file: leave out the items the second writer labelled "
                        "otherwise (with --clean; repeatable)")
    s = sub.add_parser("sample", help="a blind sample for a second writer, and its key")
    s.add_argument("files", nargs="+")
    s.add_argument("--n", type=int, default=300)
    s.add_argument("--seed", type=int, default=13)
    s.add_argument("--out", type=Path, required=True)
    s.add_argument("--key", type=Path, required=True)
    a = sub.add_parser("agreement", help="agreement of the blind labels with the key")
    a.add_argument("--key", type=Path, required=True)
    a.add_argument("--relabel", type=Path, required=True)
    a.add_argument("--out", type=Path, help="write the figures and disagreements (JSON)")
    k = sub.add_parser("card", help="write the data card (Markdown) to stdout")
    k.add_argument("files", nargs="+")
    k.add_argument("--agreement", type=Path, action="append", default=[])
    args = parser.parse_args(argv)

    if args.command == "validate":
        paths = _files(args.files)
        total = 0
        for path in paths:
            report = validate([path])
            total += len(report.errors)
            print(f"{path}: {len(report.kept)} valid, {len(report.errors)} problems")
            for e in report.errors[:50]:
                print("  " + e)
            if args.clean:
                args.clean.mkdir(parents=True, exist_ok=True)
                kept = without(report.kept, dropped(args.drop))
                (args.clean / path.name).write_text("".join(
                    json.dumps(r, ensure_ascii=False) + "\n" for r in kept), "utf-8")
        whole = validate(paths)  # duplicates across files
        cross = len(whole.errors) - total
        if cross:
            print(f"across files: {cross} duplicates")
            for e in whole.errors[-cross:][:50]:
                print("  " + e)
        return 1 if whole.errors and not args.clean else 0
    if args.command == "sample":
        report = validate(_files(args.files))
        blind, key = sample(report.kept, args.n, args.seed)
        for path, rows in ((args.out, blind), (args.key, key)):
            path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                            "utf-8")
        print(f"{len(blind)} items to {args.out}, key to {args.key}")
        return 0
    if args.command == "agreement":
        key = [r for _, r, e in read_jsonl(args.key) if not e]
        relabel = [r for _, r, e in read_jsonl(args.relabel) if not e]
        figures = agreement(key, relabel)
        print(f"{figures['agree']}/{figures['items']} agree ({figures['agreement']:.1%}), "
              f"kappa {figures['kappa']:.3f}")
        if args.out:
            args.out.write_text(json.dumps(figures, indent=1), "utf-8")
        return 0
    figures = [json.loads(p.read_text("utf-8")) for p in args.agreement]
    paths = _files(args.files)
    sys.stdout.write(card(validate(paths), figures, paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
