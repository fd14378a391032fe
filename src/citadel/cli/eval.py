from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from citadel.config import Settings

SUITES = ("demo", "scifact", "poison", "squad2", "counterfactual", "claims", "support",
          "conversations")
GATE_METRICS = ("citation_integrity", "quote_validity")
# `--check` on the poison suite also needs every case to pass (what `make poison` runs).
SUITE_CHECKS = {"poison": ("poison_pass_rate",)}
# Suites whose knowledge base is not the demo one get a snapshot home of their own.
OWN_HOME = ("scifact", "squad2", "counterfactual", "support", "conversations")
# Scripted readers (citadel.evaluation.scripted_readers) and the suites that can feed them
# gold answers; kept literal so `--help` imports no engine.
READERS = ("oracle", "guesser")
READER_SUITES = ("squad2", "counterfactual")


@click.command("eval")
@click.option("--suite", type=click.Choice(SUITES), help="Which evaluation to run.")
@click.option("--compare", "compare_paths", nargs=2, type=click.Path(path_type=Path),
              default=None, metavar="A.json B.json", help="Print metric deltas B - A and stop.")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Output folder (default eval-results/SUITE).")
@click.option("--backend", default=None, help="Backend to evaluate (default: configured).")
@click.option("--generator", default=None, help="Generator to evaluate (default: configured).")
@click.option("--dataset", type=click.Path(path_type=Path), default=None,
              help="Eval set: a JSONL file (demo, poison, counterfactual), the SciFact "
                   "folder, the SQuAD 2.0 JSON file (squad2), or the folder of knowledge "
                   "bases (support, conversations; default $CITADEL_SUPPORT_DATASET).")
@click.option("--chains", type=click.Path(path_type=Path), default=None,
              help="conversations: the chains file (default: the one shipped with Citadel).")
@click.option("--kb", type=click.Path(path_type=Path), default=None,
              help="Knowledge base for demo/poison (default examples/support-kb); support, "
                   "conversations: the KB(s) to run, NAME[,NAME] (conversations: demo too).")
@click.option("--eval-home", type=click.Path(path_type=Path), default=None,
              help="Where the suite's own snapshots live (default CITADEL_HOME/eval/SUITE; "
                   "support: one home per KB in it, kept, else temporary ones).")
@click.option("--k", type=click.IntRange(1, 1000), default=None,
              help="k of recall@k (default: top_k for demo/poison, 10 for scifact).")
@click.option("--limit", type=click.IntRange(1), default=None,
              help="Only the first N rows (squad2: N spread evenly over the file; support: "
                   "the first N questions of each KB; conversations: the first N chains).")
@click.option("--articles", default=None, metavar="A,B",
              help="squad2, counterfactual: only the questions of these articles (e.g. a "
                   "held-out fold).")
@click.option("--claim-threshold", type=click.FloatRange(0, 1), default=None,
              help="Claim-support threshold of the reader or lexical scorer (default: "
                   "0.5 for the reader, the lexical scorer's calibrated one).")
@click.option("--claim-scorer", type=click.Choice(["lexical", "reader", "llm"]),
              default="lexical", show_default=True,
              help="Who scores claim support (citation precision): the lexical scorer (it "
                   "agrees best with SciFact's labels, and vetoes a changed number), the "
                   "evidence reader (claim against quote; its SciFact agreement is reported "
                   "beside it), or a language model (the "
                   "llm_* settings' server, or CITADEL_GENERATOR=local).")
@click.option("--check", is_flag=True,
              help="Exit 1 unless citation integrity and quote validity are 100% "
                   "(poison: and every case passes).")
@click.option("--stream", is_flag=True,
              help="Score the streamed answers (what the HTTP stream and the page show): "
                   "each question through stream(), its deltas checked against its final "
                   "answer.")
@click.option("--reader", type=click.Choice(READERS), default=None,
              help="squad2, counterfactual: a scripted reader answers instead of the "
                   "generator (oracle: cites the gold answer's sentence, else abstains; "
                   "guesser: always cites the sentence sharing most words with the "
                   "question), so the decision layer is measured apart from any model.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def eval_command(
    suite: str | None, compare_paths: tuple[Path, Path] | None, out: Path | None,
    backend: str | None, generator: str | None, dataset: Path | None, chains: Path | None,
    kb: Path | None, eval_home: Path | None, k: int | None, limit: int | None,
    articles: str | None,
    claim_threshold: float | None, claim_scorer: str, check: bool, stream: bool,
    reader: str | None, quiet: bool,
) -> None:
    """Score each layer on its own: retrieval, citation integrity, quote validity, claim
    support, completeness, correctness, abstention, poison cases. `--suite claims` scores
    the claim scorer alone on SciFact's held-out SUPPORT/CONTRADICT rationales; `--suite
    support` the decision (answer / abstain / conflict) on customer-support KBs; `--suite
    conversations` follow-up questions asked in threads (rewrite and decision, turn by
    turn)."""
    from citadel.evaluation.results import ResultsError, load_results

    if compare_paths:
        if suite:
            raise click.UsageError("use either --suite or --compare, not both")
        from citadel.evaluation.report import compare

        a_path, b_path = compare_paths
        try:
            click.echo(compare(load_results(a_path), load_results(b_path), str(a_path),
                               str(b_path)))
        except ResultsError as exc:
            raise click.ClickException(str(exc)) from None
        return
    if not suite:
        raise click.UsageError(f"choose --suite {'|'.join(SUITES)}, or --compare A.json B.json")
    if articles and suite not in ("squad2", "counterfactual"):
        raise click.UsageError("--articles applies to --suite squad2 and counterfactual only")
    if reader and suite not in READER_SUITES:
        raise click.UsageError(f"--reader applies to --suite {' and '.join(READER_SUITES)} "
                               f"only (they know each question's gold answers)")
    if reader and generator:
        raise click.UsageError("use either --reader or --generator: the scripted reader "
                               "replaces the generator")
    if chains and suite != "conversations":
        raise click.UsageError("--chains applies to --suite conversations only")
    if stream and suite == "claims":
        raise click.UsageError("--stream needs a suite that asks questions (claims scores "
                               "the claim scorer alone)")
    chosen = [a.strip() for a in articles.split(",") if a.strip()] if articles else None
    results = _run(suite, out or Path("eval-results") / suite, backend, generator, dataset, kb,
                   eval_home, k, limit, chosen, claim_threshold, claim_scorer, not quiet,
                   stream, reader, chains)
    if check:
        checked = GATE_METRICS + SUITE_CHECKS.get(suite, ())
        broken = [f"{m} {results.metrics[m]:.3f}" for m in checked
                  if results.metrics.get(m, 1.0) < 1.0]
        if broken:
            raise click.ClickException("eval check failed: " + ", ".join(broken)
                                       + " (failures listed in GROUNDED_EVAL.md)")


def _run(suite: str, out: Path, backend: str | None, generator: str | None,
         dataset: Path | None, kb: Path | None, eval_home: Path | None, k: int | None,
         limit: int | None, articles: list[str] | None, claim_threshold: float | None,
         claim_scorer: str, progress: bool, stream: bool = False, reader: str | None = None,
         chains: Path | None = None):
    from citadel.config import Settings
    from citadel.evaluation.claims import LexicalClaimScorer, ReaderClaimScorer

    overrides = {n: v for n, v in (("backend", backend), ("generator", generator)) if v}
    settings = Settings.load(overrides=overrides)
    home = eval_home or settings.home / "eval" / (suite if suite in OWN_HOME else "demo")
    settings = settings.model_copy(update={"home": home})
    if claim_scorer == "llm":
        if claim_threshold is not None:
            raise click.UsageError("--claim-threshold applies to the lexical scorer only")
        from citadel.evaluation.llm_judge import llm_scorer

        scorer = llm_scorer(settings)
    elif claim_scorer == "reader":
        scorer = ReaderClaimScorer() if claim_threshold is None else ReaderClaimScorer(
            threshold=claim_threshold)
    else:
        scorer = LexicalClaimScorer() if claim_threshold is None else LexicalClaimScorer(
            threshold=claim_threshold)
    try:
        if suite == "support":
            return _run_support(out, settings, scorer, dataset, kb, eval_home, limit,
                                progress, stream)
        if suite == "conversations":
            return _run_conversations(out, settings, scorer, chains, dataset, kb, eval_home,
                                      limit, progress, stream)
        return _run_with(suite, out, settings, scorer, dataset, kb, k, limit, articles,
                         progress, stream, reader)
    finally:
        if hasattr(scorer, "close"):
            scorer.close()


def _run_with(suite: str, out: Path, settings: Settings, scorer, dataset: Path | None,
              kb: Path | None, k: int | None, limit: int | None,
              articles: list[str] | None, progress: bool, stream: bool = False,
              reader: str | None = None):
    from citadel.evaluation import locations, suites
    from citadel.evaluation.datasets import DatasetError, load_poison, load_qa
    from citadel.evaluation.scifact import load_scifact

    options = suites.RunOptions(settings, scorer, k=k, progress=progress, limit=limit,
                                stream=stream, reader=reader)
    kb_path = kb or locations.default_kb()
    data_path = dataset or locations.default_dataset(suite)
    started = time.perf_counter()
    try:
        if data_path is None and suite in ("scifact", "claims"):
            raise DatasetError("SciFact data not found: pass --dataset DIR (a folder with "
                               "corpus.jsonl, queries.jsonl and qrels/test.tsv)")
        if suite in ("squad2", "counterfactual"):
            run = _run_squad2(suite, data_path, options, articles)
        elif suite not in ("scifact", "claims") and not kb_path.exists():
            raise DatasetError(f"knowledge base not found: {kb_path} (pass --kb PATH)")
        elif suite == "demo":
            run = suites.run_qa(load_qa(data_path), [kb_path], options)
        elif suite == "poison":
            run = suites.run_poison(load_poison(data_path), [kb_path], options)
        elif suite == "claims":
            run = suites.run_claims(load_scifact(data_path), options)
        else:
            run = suites.run_scifact(load_scifact(data_path), options)
    except (DatasetError, ValueError, suites.StreamMismatch) as exc:
        raise click.ClickException(str(exc)) from None
    return _write(suite, out, run, settings, scorer, started, stream)


def _write(suite: str, out: Path, run, settings: Settings, scorer, started: float,
           stream: bool):
    from citadel.evaluation import locations
    from citadel.evaluation.report import summary_line, write_outputs
    from citadel.evaluation.results import build_results

    run.config["answers"] = "stream" if stream else "answer"
    results = build_results(run, settings, scorer, time.perf_counter() - started,
                            locations.project_root())
    written = write_outputs(out, results, run.rows)
    click.echo(f"{suite}: {len(run.rows)} rows, snapshot {results.snapshot_id}")
    click.echo(summary_line(results))
    click.echo("wrote " + ", ".join(str(p) for p in written))
    return results


def _run_support(out: Path, settings: Settings, scorer, dataset: Path | None,
                 kb: Path | None, eval_home: Path | None, limit: int | None, progress: bool,
                 stream: bool):
    """The support suite: `dataset` (else $CITADEL_SUPPORT_DATASET) is the folder of
    knowledge bases, `kb` names the ones to run; each KB gets a home of its own, in
    `eval_home` when given."""
    from citadel.evaluation import suites
    from citadel.evaluation.datasets import DatasetError
    from citadel.evaluation.support import find_dataset, load_support, run_support

    options = suites.RunOptions(settings, scorer, progress=progress, limit=limit,
                                stream=stream)
    only = [n.strip() for n in str(kb).split(",") if n.strip()] if kb else None
    started = time.perf_counter()
    try:
        data = load_support(find_dataset(dataset), only)
        run = run_support(data, options, homes=eval_home)
    except (DatasetError, ValueError, suites.StreamMismatch) as exc:
        raise click.ClickException(str(exc)) from None
    return _write("support", out, run, settings, scorer, started, stream)


def _run_conversations(out: Path, settings: Settings, scorer, chains: Path | None,
                       dataset: Path | None, kb: Path | None, eval_home: Path | None,
                       limit: int | None, progress: bool, stream: bool):
    """The conversations suite: the chains file (else the shipped one); chains of support
    KBs run when a support dataset is found (`dataset`, else $CITADEL_SUPPORT_DATASET)."""
    from citadel.evaluation import locations, suites
    from citadel.evaluation.conversations import load_chains, run_conversations
    from citadel.evaluation.datasets import DatasetError
    from citadel.evaluation.support import find_dataset

    options = suites.RunOptions(settings, scorer, progress=progress, limit=limit,
                                stream=stream)
    only = [n.strip() for n in str(kb).split(",") if n.strip()] if kb else None
    started = time.perf_counter()
    try:
        data = load_chains(chains or locations.default_dataset("conversations"))
        try:
            support = find_dataset(dataset)
        except DatasetError:
            support = None  # the support KBs' chains are skipped, and the results say so
        run = run_conversations(data, options, support, only=only, homes=eval_home)
    except (DatasetError, ValueError, suites.StreamMismatch) as exc:
        raise click.ClickException(str(exc)) from None
    return _write("conversations", out, run, settings, scorer, started, stream)


def _run_squad2(suite: str, data_path, options, articles: list[str] | None):
    """squad2: `data_path` is the SQuAD 2.0 file; counterfactual: the cases file (the
    paragraphs come from the shared SQuAD 2.0 file)."""
    from citadel.evaluation import locations
    from citadel.evaluation.counterfactual import run_counterfactual
    from citadel.evaluation.datasets import DatasetError
    from citadel.evaluation.squad2 import load_squad2, run_squad2

    squad_path = data_path if suite == "squad2" else locations.default_dataset("squad2")
    if squad_path is None:
        raise DatasetError("SQuAD 2.0 data not found: expected ../shared/data/squad2/"
                           "dev-half.json" + (" (or pass --dataset FILE)" if suite == "squad2"
                                              else ""))
    data = load_squad2(squad_path)
    if suite == "squad2":
        return run_squad2(data, options, articles=articles)
    return run_counterfactual(data, data_path, options, articles=articles)
