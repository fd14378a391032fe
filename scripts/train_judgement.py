"""Train the judgement stage's weights: logistic regression on SQuAD 2.0 + the demo eval set,
cross-validated by article.

    .venv/bin/pip install scikit-learn        # training only (the `train` extra)
    .venv/bin/python scripts/train_judgement.py [--home DIR] [--out FILE] [--folds DIR]

1. Builds (or reuses) two knowledge bases with the default settings — the SQuAD 2.0 paragraphs
   (`../shared/data/squad2/dev-half.json`) and `examples/support-kb` — and, for every question
   (`eval/qa.jsonl` for the demo), runs retrieval and context building exactly as the engine
   does and computes the judgement features of every context sentence.
2. Labels a sentence 1 when it contains a gold answer (SQuAD: the answer's offsets; demo: a
   key fact, in a gold chunk), else 0 (every sentence of an unanswerable question is 0).
3. Leave-one-group-out cross-validation, the groups being SQuAD's 8 articles and the demo
   set: the model and the threshold are fitted on the other groups, and the held-out group's
   questions are decided with them. Per fold, the weights go to `--folds` (for end-to-end
   cross-validated runs of the suites: `scripts/judgement_cv.py`).
4. Fits the final model on every group and writes `--out` (default: the shipped
   `src/citadel/answering/judgement_weights.json`), with the cross-validated figures.

The evidence reader's logit is one of the features. The shipped reader never saw the SQuAD
dev half nor the demo set (`scripts/train_reader.py`), so its scores here are out-of-sample,
as they are on a user's documents. Besides the answer threshold, two cut-offs are fitted:
the *floor* (the context's best sentence below it: no language model is asked), the
highest value that withholds at most FLOOR_WITHHELD of the answerable questions whose answer
is in the context; and the *check* (a model's cited sentence must reach it), the value that
keeps CHECK_RELEASED of those questions' answering sentences.

The threshold maximises the mean of "answerable: best sentence answers and is right" and
"unanswerable: abstained" on the training questions (demo questions weighted x4, so that the
75-question support set counts about as much as one article).
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

from citadel.answering.context import build_context
from citadel.answering.judgement import (
    DECIDER_INPUTS,
    FEATURES,
    MODEL_SENTENCES,
    Judge,
    JudgementWeights,
    Logistic,
    can_answer,
    decider_inputs,
    sigmoid,
    statement_groups,
)
from citadel.answering.reader import Reader
from citadel.config import Settings
from citadel.engine import Engine
from citadel.evaluation.datasets import load_qa
from citadel.evaluation.metrics import fact_present
from citadel.evaluation.squad2 import find_squad2, load_squad2, write_corpus
from citadel.ingest.pipeline import ingest
from citadel.retrieval.embedders import get_embedder
from citadel.text.analysis import Analyser

ROOT = Path(__file__).resolve().parents[1]
WEIGHTS = ROOT / "src" / "citadel" / "answering" / "judgement_weights.json"
DEMO_WEIGHT = 4.0
C = 1.0  # inverse regularisation strength of the logistic regression
FLOOR_WITHHELD = 0.01  # fitted at 1% so that held-out articles stay under the 2% promised
CHECK_RELEASED = 0.92  # share of answering sentences a model may cite and keep: the
# largest check that keeps a cross-validated oracle (cites the answer) released at >= 90%


def _placeholder() -> JudgementWeights:
    """Weights that are never used to decide: feature extraction only needs a Judge."""
    zero = Logistic(weights=(0.0,) * len(FEATURES), bias=0.0, mean=(0.0,) * len(FEATURES),
                    scale=(1.0,) * len(FEATURES))
    n = DECIDER_INPUTS
    return JudgementWeights(version="untrained", features=FEATURES, ranker=zero,
                            decider=Logistic(weights=(0.0,) * n, bias=0.0, mean=(0.0,) * n,
                                             scale=(1.0,) * n), threshold=0.5)


def _context(engine: Engine, question: str):
    s = engine.settings
    ranked = engine.retrieve(question, None, None, None)
    return build_context(ranked, s.max_context, authority_weight=s.authority_weight,
                         freshness_weight=s.freshness_weight,
                         max_per_document=s.max_per_document)


def _question_rows(engine: Engine, judge: Judge, question: str, group: str, qid: str,
                   answerable: bool, is_gold) -> dict:
    context = _context(engine, question)
    # What the extractive path sees (the reader reads READER_SENTENCES statements), and what
    # a language model's path sees (it reads MODEL_SENTENCES): the floor and the check apply
    # on the second, so they are fitted on it.
    return {"group": group, "id": qid, "answerable": answerable, "question": question,
            "sentences": _sentence_rows(judge, question, context, answerable, is_gold, None),
            "model_sentences": _sentence_rows(judge, question, context, answerable, is_gold,
                                              MODEL_SENTENCES)}


def _sentence_rows(judge: Judge, question: str, context, answerable: bool, is_gold,
                   read: int | None) -> list[dict]:
    _, candidates, _ = judge.candidates(question, context, read)
    sentences = []
    for c in candidates:
        chunk = c.block.chunk
        start, end = chunk.start + c.sentence.start, chunk.start + c.sentence.end
        label = bool(answerable and is_gold(chunk, start, end))
        text = chunk.content[c.sentence.start:c.sentence.end]
        sentences.append({"x": [round(v, 6) for v in c.values], "y": int(label),
                          "statement": can_answer(text), "chunk": chunk.chunk_id,
                          "read": c.read is not None,
                          "terms": list(c.terms), "text": text})
    # The texts are for probes of candidate features (scripts/probe_sentence_similarity.py).
    return sentences


def extract(home: Path, progress: bool, reader: Path | None) -> list[dict]:
    embedder = get_embedder("minilm")
    analyser = Analyser()
    judge = Judge(analyser, weights=_placeholder(), reader=Reader(reader))
    rows: list[dict] = []
    squad_path = find_squad2(ROOT)
    if squad_path is None:
        sys.exit("SQuAD 2.0 data not found at ../shared/data/squad2/dev-half.json")
    data = load_squad2(squad_path)
    settings = Settings(home=home / "squad2")
    corpus = write_corpus(list(data.paragraphs.values()), settings.home / "corpus")
    ingest([corpus], settings, embedder=embedder, analyser=analyser, progress=progress)
    engine = Engine.open(settings, embedder=embedder, judge=judge)
    try:
        for n, q in enumerate(data.questions):
            header = len(f"# {q.article}\n\n")
            golds = [(header + s, header + s + len(a)) for a, s in zip(q.answers, q.starts,
                                                                       strict=True)]

            def is_gold(chunk, start, end, q=q, golds=golds):
                return chunk.document_id == q.paragraph_id and any(
                    start <= a and b <= end for a, b in golds)

            rows.append(_question_rows(engine, judge, q.text, q.article, q.id, q.answerable,
                                       is_gold))
            if progress and n % 200 == 0:
                print(f"squad2 {n}/{len(data.questions)}", file=sys.stderr)
    finally:
        engine.close()
    settings = Settings(home=home / "demo")
    ingest([ROOT / "examples" / "support-kb"], settings, embedder=embedder, analyser=analyser,
           progress=progress)
    engine = Engine.open(settings, embedder=embedder, judge=judge)
    try:
        for row in load_qa(ROOT / "eval" / "qa.jsonl").rows:
            def is_gold(chunk, start, end, row=row):
                sentence = chunk.content[start - chunk.start:end - chunk.start]
                return chunk.chunk_id in row.gold_chunk_ids and any(
                    fact_present(sentence, f if isinstance(f, str) else f[0]) or (
                        not isinstance(f, str) and any(fact_present(sentence, a) for a in f))
                    for f in row.key_facts)

            rows.append(_question_rows(engine, judge, row.question, "demo", row.id,
                                       row.answerable, is_gold))
    finally:
        engine.close()
    return rows


# --- fitting and deciding ---------------------------------------------------------------------


def _logistic(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> Logistic:
    from sklearn.linear_model import LogisticRegression

    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0
    model = LogisticRegression(C=C, max_iter=5000)
    model.fit((x - mean) / scale, y, sample_weight=w)
    return Logistic(weights=tuple(round(float(v), 6) for v in model.coef_[0]),
                    bias=round(float(model.intercept_[0]), 6),
                    mean=tuple(round(float(v), 6) for v in mean),
                    scale=tuple(round(float(v), 6) for v in scale))


def _weight(row: dict) -> float:
    return DEMO_WEIGHT if row["group"] == "demo" else 1.0


def top_sentences(rows: list[dict], ranker: Logistic) -> list[tuple[dict, list[float], int]]:
    """Per question: (row, the decider's inputs for its best-ranked statement, whether that
    sentence holds the answer); questions whose context has no statement are left out."""
    out = []
    for r in rows:
        values = [s["x"] for s in r["sentences"]]
        if not values:
            continue
        logits = [ranker.logit(v) for v in values]
        groups = statement_groups([s["terms"] for s in r["sentences"]])
        inputs = decider_inputs(values, logits, groups)
        best = max((k for k, s in enumerate(r["sentences"]) if s["statement"]),
                   key=lambda k: logits[k], default=None)
        if best is not None:
            out.append((r, inputs[best], r["sentences"][best]["y"]))
    return out


def fit(rows: list[dict], version: str) -> JudgementWeights:
    x = np.array([s["x"] for r in rows for s in r["sentences"]], dtype=float)
    y = np.array([s["y"] for r in rows for s in r["sentences"]])
    w = np.array([_weight(r) for r in rows for _ in r["sentences"]])
    ranker = _logistic(x, y, w)
    tops = top_sentences(rows, ranker)
    decider = _logistic(np.array([t[1] for t in tops], dtype=float),
                        np.array([t[2] for t in tops]), np.array([_weight(t[0]) for t in tops]))
    weights = JudgementWeights(version=version, features=FEATURES, ranker=ranker,
                               decider=decider, threshold=0.5)
    floor, check = choose_cutoffs(rows, weights)
    return weights.model_copy(update={"threshold": choose_threshold(rows, weights),
                                      "floor": floor, "check": check})


def probabilities(row: dict, weights: JudgementWeights, key: str = "sentences"
                  ) -> list[float]:
    """Every sentence's probability of answering, as `Judge.judge` computes it (`key`:
    "model_sentences" for a language model's path)."""
    values = [s["x"] for s in row[key]]
    if not values:
        return []
    logits = [weights.ranker.logit(v) for v in values]
    groups = statement_groups([s["terms"] for s in row[key]])
    return [sigmoid(weights.decider.logit(x)) for x in decider_inputs(values, logits, groups)]


_MATCHED = FEATURES.index("matched")


def guess(row: dict) -> int | None:
    """The sentence a guessing model cites: the statement sharing most words with the
    question (the first of equals)."""
    statements = [k for k, s in enumerate(row["sentences"]) if s["statement"]]
    return max(statements, key=lambda k: (row["sentences"][k]["x"][_MATCHED], -k),
               default=None)


def cutoff_rows(rows: list[dict], weights: JudgementWeights):
    """On a language model's path: (answerable rows with the answer in the context: best p,
    the first answering sentence's p), (unanswerable rows with a context: best p, the guessed
    sentence's p)."""
    answerable, unanswerable = [], []
    for r in rows:
        key = "model_sentences" if "model_sentences" in r else "sentences"
        p = probabilities(r, weights, key)
        if not p:
            continue
        gold = [q for q, s in zip(p, r[key], strict=True) if s["y"]]
        if r["answerable"] and gold:
            # The oracle cites the first sentence (in context order) that holds the answer.
            answerable.append((max(p), gold[0]))
        elif not r["answerable"]:
            g = guess(r)
            unanswerable.append((max(p), p[g] if g is not None else 0.0))
    return answerable, unanswerable


def choose_cutoffs(rows: list[dict], weights: JudgementWeights) -> tuple[float, float]:
    answerable, _ = cutoff_rows(rows, weights)
    if not answerable:
        return 0.0, 0.0
    floor = float(np.quantile([b for b, _ in answerable], FLOOR_WITHHELD))
    check = float(np.quantile([g for _, g in answerable], 1.0 - CHECK_RELEASED))
    return round(max(0.0, floor - 1e-4), 4), round(max(0.0, check - 1e-4), 4)


def cutoff_outcome(rows: list[dict], weights: JudgementWeights) -> dict[str, float]:
    """The oracle and guesser rows on these questions, from the judgement alone: withheld
    before the model, an answering sentence kept at the check, a guess stopped."""
    answerable, unanswerable = cutoff_rows(rows, weights)
    n_a, n_u = max(len(answerable), 1), max(len(unanswerable), 1)
    return {
        "withheld_before_model": sum(b < weights.floor for b, _ in answerable) / n_a,
        "oracle_released": sum(b >= weights.floor and g >= weights.check
                               for b, g in answerable) / n_a,
        "guesser_stopped": sum(b < weights.floor or g < weights.check
                               for b, g in unanswerable) / n_u,
        "answer_in_context": len(answerable), "unanswerable_with_context": len(unanswerable)}


def decide(rows: list[dict], weights: JudgementWeights) -> list[tuple[dict, float, int]]:
    """Per question: (row, the decider's probability for its best-ranked statement, whether
    that sentence holds the answer); no statement in the context: probability 0."""
    tops = {t[0]["id"]: t for t in top_sentences(rows, weights.ranker)}
    out = []
    for r in rows:
        top = tops.get(r["id"])
        if top is None:
            out.append((r, 0.0, 0))
        else:
            out.append((r, sigmoid(weights.decider.logit(top[1])), top[2]))
    return out


def outcome(decided: list[tuple[dict, float, int]], threshold: float,
            weighted: bool = False) -> dict[str, float]:
    ans_ok = ans_abst = ans_n = un_ok = un_n = 0.0
    for r, p, right in decided:
        w = DEMO_WEIGHT if weighted and r["group"] == "demo" else 1.0
        if r["answerable"]:
            ans_n += w
            ans_ok += w * (p >= threshold and right)
            ans_abst += w * (p < threshold)
        else:
            un_n += w
            un_ok += w * (p < threshold)
    return {"answerable_correct": ans_ok / max(ans_n, 1), "false_abstention":
            ans_abst / max(ans_n, 1), "unanswerable_abstained": un_ok / max(un_n, 1),
            "answerable": ans_n, "unanswerable": un_n}


def choose_threshold(rows: list[dict], weights: JudgementWeights) -> float:
    decided = decide(rows, weights)
    best, best_t = -1.0, 0.5
    for t in np.arange(0.02, 0.98, 0.01):
        o = outcome(decided, float(t), weighted=True)
        score = (o["answerable_correct"] + o["unanswerable_abstained"]) / 2
        if score > best:
            best, best_t = score, round(float(t), 2)
    return best_t


def cross_validate(rows: list[dict], folds: Path) -> dict[str, dict[str, float]]:
    folds.mkdir(parents=True, exist_ok=True)
    groups = list(dict.fromkeys(r["group"] for r in rows))
    results: dict[str, dict[str, float]] = {}
    pooled: list[tuple[dict, float, int, float]] = []
    pooled_cut: list = []
    for g in groups:
        train = [r for r in rows if r["group"] != g]
        test = [r for r in rows if r["group"] == g]
        weights = fit(train, f"cv-without-{g}")
        (folds / f"{_slug(g)}.json").write_text(weights.model_dump_json(indent=1) + "\n")
        decided = decide(test, weights)
        results[g] = {**outcome(decided, weights.threshold), "threshold": weights.threshold,
                      **cutoff_outcome(test, weights), "floor": weights.floor,
                      "check": weights.check}
        pooled_cut.append((cutoff_rows(test, weights), weights))
        pooled += [(r, p, right, weights.threshold) for r, p, right in decided]
        print(f"  held out {g:28s} thr {weights.threshold:.2f}  " + _fmt(results[g]))
    squad = [(r, p, y) for r, p, y, t in pooled if r["group"] != "demo" and p >= 0]
    thresholds = {r["id"]: t for r, _, _, t in pooled}
    results["squad2 (all articles, each held out)"] = _pooled(squad, thresholds)
    print("  squad2 pooled, each held out     " + _fmt(results[
        "squad2 (all articles, each held out)"]))
    results["cut-offs (all groups, each held out)"] = _pooled_cutoffs(pooled_cut)
    print("  cut-offs pooled, each held out   " + ", ".join(
        f"{k} {v:.3f}" for k, v in results["cut-offs (all groups, each held out)"].items()))
    return results


def _pooled_cutoffs(folds) -> dict[str, float]:
    a_n = u_n = withheld = released = stopped = 0
    for (answerable, unanswerable), w in folds:
        a_n += len(answerable)
        u_n += len(unanswerable)
        withheld += sum(b < w.floor for b, _ in answerable)
        released += sum(b >= w.floor and g >= w.check for b, g in answerable)
        stopped += sum(b < w.floor or g < w.check for b, g in unanswerable)
    return {"withheld_before_model": withheld / max(a_n, 1),
            "oracle_released": released / max(a_n, 1),
            "guesser_stopped": stopped / max(u_n, 1), "answer_in_context": a_n,
            "unanswerable_with_context": u_n}


def _pooled(decided, thresholds) -> dict[str, float]:
    ans_ok = ans_abst = ans_n = un_ok = un_n = 0
    for r, p, right in decided:
        t = thresholds[r["id"]]
        if r["answerable"]:
            ans_n += 1
            ans_ok += p >= t and right
            ans_abst += p < t
        else:
            un_n += 1
            un_ok += p < t
    return {"answerable_correct": ans_ok / ans_n, "false_abstention": ans_abst / ans_n,
            "unanswerable_abstained": un_ok / un_n, "answerable": ans_n, "unanswerable": un_n}


def _fmt(o: dict[str, float]) -> str:
    return (f"answerable correct {o['answerable_correct']:.3f}  false abstention "
            f"{o['false_abstention']:.3f}  unanswerable abstained "
            f"{o['unanswerable_abstained']:.3f}  (n {int(o['answerable'])}/"
            f"{int(o['unanswerable'])})")


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in text.lower()).strip("-")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=ROOT / ".citadel" / "train-judgement",
                        help="where the training knowledge bases and features are kept")
    parser.add_argument("--out", type=Path, default=WEIGHTS)
    parser.add_argument("--folds", type=Path, default=None,
                        help="per-fold weights (default HOME/folds)")
    parser.add_argument("--reuse-features", action="store_true",
                        help="reuse HOME/features.jsonl.gz from an earlier run")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--reader", type=Path, default=None,
                        help="evidence reader model folder (default: the shipped one)")
    args = parser.parse_args()
    try:
        import sklearn  # noqa: F401
    except ImportError:
        sys.exit("training needs scikit-learn: .venv/bin/pip install 'scikit-learn>=1.4'")
    cache = args.home / "features.jsonl.gz"
    if args.reuse_features and cache.is_file():
        with gzip.open(cache, "rt") as fh:
            rows = [json.loads(line) for line in fh]
    else:
        rows = extract(args.home, not args.quiet, args.reader)
        args.home.mkdir(parents=True, exist_ok=True)
        with gzip.open(cache, "wt") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in rows)
    print(f"{len(rows)} questions, {sum(len(r['sentences']) for r in rows)} sentences")
    golden = [r for r in rows if any(s["y"] for s in r["sentences"])]
    read = sum(any(s["y"] and s.get("read") for s in r["sentences"]) for r in golden)
    print(f"the reader read an answering sentence for {read}/{len(golden)} questions whose "
          "answer is in the context")
    print("cross-validation by article (train on the others, decide the held-out one):")
    cv = cross_validate(rows, args.folds or args.home / "folds")
    digest = hashlib.sha256(json.dumps([r["sentences"] for r in rows]).encode()).hexdigest()
    weights = fit(rows, f"judgement-{dt.date.today().isoformat()}-{digest[:8]}")
    out = weights.model_dump(mode="json")
    out["trained_on"] = {"squad2": "dev-half.json (8 articles)", "demo": "eval/qa.jsonl",
                         "questions": len(rows), "features_sha256": digest,
                         "demo_weight": DEMO_WEIGHT, "C": C,
                         "command": "python scripts/train_judgement.py"}
    out["trained_on"]["reader"] = Reader(args.reader).version
    out["cross_validation"] = {k: {m: round(v, 4) for m, v in o.items()} for k, o in cv.items()}
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(f"threshold {weights.threshold} (all data); wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
