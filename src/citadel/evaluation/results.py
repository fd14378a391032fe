"""`results.json`: every metric of one run, its counts and failures, and how the run was
made (dataset version, snapshot, backend, strategy, generator, prompt and retrieval config
versions, git commit)."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from citadel.config import Settings
from citadel.evaluation.claims import ClaimSupportScorer
from citadel.evaluation.suites import SuiteRun

RESULTS_SCHEMA = "citadel-eval-v1"


class ResultsError(ValueError):
    """A results file that cannot be read or compared."""


class EvalResults(BaseModel):
    model_config = ConfigDict(frozen=True, extra="allow")

    schema_version: str = RESULTS_SCHEMA
    suite: str
    metrics: dict[str, float]
    counts: dict[str, dict[str, float]]
    failures: dict[str, list[str]] = {}
    breakdown: dict[str, dict[str, float]] = {}
    dataset: dict[str, Any]
    snapshot_id: str | list[str] = ""
    backend: str | list[str] = ""
    strategy: str | list[str] = ""
    generator: str | list[str] = ""
    prompt_version: str | list[str] = ""
    retrieval_config_version: str | list[str] = ""
    embedder: str = ""
    git_commit: str = "unknown"
    citadel_version: str = ""
    created_at: str = ""
    seconds: float = 0.0
    config: dict[str, Any] = {}


def git_commit(where: Path) -> str:
    """HEAD of the repository holding `where`, with `-dirty` for uncommitted tracked changes."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=where, capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip()

    try:
        head = git("rev-parse", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{head}-dirty" if dirty else head


def build_results(
    run: SuiteRun, settings: Settings, scorer: ClaimSupportScorer, seconds: float,
    repo: Path,
) -> EvalResults:
    from citadel import __version__

    return EvalResults(
        suite=run.suite,
        metrics=run.tally.metrics(),
        counts=run.tally.counts(),
        failures={k: v for k, v in sorted(run.tally.failures.items())},
        breakdown={name: t.metrics() for name, t in sorted(run.breakdown.items())},
        dataset=run.dataset,
        embedder=settings.embedder,
        git_commit=git_commit(repo),
        citadel_version=__version__,
        created_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        seconds=round(seconds, 1),
        config={**run.config, "top_k": settings.top_k, "max_context": settings.max_context,
                "claim_scorer": scorer.name, "claim_threshold": scorer.threshold,
                # A learned judge is measured too: its agreement with SciFact's labels.
                **({"claim_scorer_agreement": scorer.agreement()}
                   if hasattr(scorer, "agreement") else {})},
        **run.run,
        **run.extra,
    )


def load_results(path: Path) -> EvalResults:
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        raise ResultsError(f"results file not found: {path}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ResultsError(f"{path} is not a JSON results file: {exc}") from None
    try:
        return EvalResults.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ResultsError(f"{path} is not a citadel eval results file ({where}: "
                           f"{first['msg']})") from None
