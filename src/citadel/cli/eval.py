from __future__ import annotations

import time
from pathlib import Path

import click

from citadel.config import Settings

SUITES = ("demo", "scifact", "poison")
GATE_METRICS = ("citation_integrity", "quote_validity")
# `--check` on the poison suite also needs every case to pass (what `make poison` runs).
SUITE_CHECKS = {"poison": ("poison_pass_rate",)}


@click.command("eval")
@click.option("--suite", type=click.Choice(SUITES), help="Which evaluation to run.")
@click.option("--compare", "compare_paths", nargs=2, type=click.Path(path_type=Path),
              default=None, metavar="A.json B.json", help="Print metric deltas B - A and stop.")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Output folder (default eval-results/SUITE).")
@click.option("--backend", default=None, help="Backend to evaluate (default: configured).")
@click.option("--generator", default=None, help="Generator to evaluate (default: configured).")
@click.option("--dataset", type=click.Path(path_type=Path), default=None,
              help="Eval set: a JSONL file (demo, poison) or the SciFact folder.")
@click.option("--kb", type=click.Path(path_type=Path), default=None,
              help="Knowledge base for demo/poison (default examples/support-kb).")
@click.option("--eval-home", type=click.Path(path_type=Path), default=None,
              help="Where the suite's own snapshots live (default CITADEL_HOME/eval/SUITE).")
@click.option("--k", type=click.IntRange(1, 1000), default=None,
              help="k of recall@k (default: top_k for demo/poison, 10 for scifact).")
@click.option("--limit", type=click.IntRange(1), default=None, help="Only the first N rows.")
@click.option("--claim-threshold", type=click.FloatRange(0, 1), default=None,
              help="Claim-support threshold (default: the scorer's calibrated one).")
@click.option("--check", is_flag=True,
              help="Exit 1 unless citation integrity and quote validity are 100% "
                   "(poison: and every case passes).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def eval_command(
    suite: str | None, compare_paths: tuple[Path, Path] | None, out: Path | None,
    backend: str | None, generator: str | None, dataset: Path | None, kb: Path | None,
    eval_home: Path | None, k: int | None, limit: int | None, claim_threshold: float | None,
    check: bool, quiet: bool,
) -> None:
    """Score each layer on its own: retrieval, citation integrity, quote validity, claim
    support, completeness, correctness, abstention, poison cases."""
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
        raise click.UsageError("choose --suite demo|scifact|poison, or --compare A.json B.json")
    results = _run(suite, out or Path("eval-results") / suite, backend, generator, dataset, kb,
                   eval_home, k, limit, claim_threshold, not quiet)
    if check:
        checked = GATE_METRICS + SUITE_CHECKS.get(suite, ())
        broken = [f"{m} {results.metrics[m]:.3f}" for m in checked
                  if results.metrics.get(m, 1.0) < 1.0]
        if broken:
            raise click.ClickException("eval check failed: " + ", ".join(broken)
                                       + " (failures listed in GROUNDED_EVAL.md)")


def _run(suite: str, out: Path, backend: str | None, generator: str | None,
         dataset: Path | None, kb: Path | None, eval_home: Path | None, k: int | None,
         limit: int | None, claim_threshold: float | None, progress: bool):
    from citadel.evaluation import locations, suites
    from citadel.evaluation.claims import LexicalClaimScorer
    from citadel.evaluation.datasets import DatasetError, load_poison, load_qa
    from citadel.evaluation.report import summary_line, write_outputs
    from citadel.evaluation.results import build_results
    from citadel.evaluation.scifact import load_scifact

    overrides = {n: v for n, v in (("backend", backend), ("generator", generator)) if v}
    settings = Settings.load(overrides=overrides)
    home = eval_home or settings.home / "eval" / ("scifact" if suite == "scifact" else "demo")
    settings = settings.model_copy(update={"home": home})
    scorer = LexicalClaimScorer() if claim_threshold is None else LexicalClaimScorer(
        threshold=claim_threshold)
    options = suites.RunOptions(settings, scorer, k=k, progress=progress, limit=limit)
    kb_path = kb or locations.default_kb()
    data_path = dataset or locations.default_dataset(suite)
    started = time.perf_counter()
    try:
        if data_path is None:
            raise DatasetError("SciFact data not found: pass --dataset DIR (a folder with "
                               "corpus.jsonl, queries.jsonl and qrels/test.tsv)")
        if suite != "scifact" and not kb_path.exists():
            raise DatasetError(f"knowledge base not found: {kb_path} (pass --kb PATH)")
        if suite == "demo":
            run = suites.run_qa(load_qa(data_path), [kb_path], options)
        elif suite == "poison":
            run = suites.run_poison(load_poison(data_path), [kb_path], options)
        else:
            run = suites.run_scifact(load_scifact(data_path), options)
    except (DatasetError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    results = build_results(run, settings, scorer, time.perf_counter() - started,
                            locations.project_root())
    written = write_outputs(out, results, run.rows)
    click.echo(f"{suite}: {len(run.rows)} rows, snapshot {results.snapshot_id}")
    click.echo(summary_line(results))
    click.echo("wrote " + ", ".join(str(p) for p in written))
    return results
