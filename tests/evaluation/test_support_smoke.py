"""The support suite on the dataset CITADEL_SUPPORT_DATASET names (skipped without one): a
few questions per KB through the real CLI and the default (MiniLM) embedder. No accuracy
threshold: it checks that the harness runs on that data, that every citation stays sound,
and that the report is written."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

DATASET = os.environ.get("CITADEL_SUPPORT_DATASET", "").strip()
QUESTIONS_PER_KB = 3

pytestmark = pytest.mark.skipif(not DATASET or not Path(DATASET).is_dir(),
                                reason="CITADEL_SUPPORT_DATASET names no folder")


def test_support_dataset_runs_with_sound_citations_and_a_report(tmp_path):
    out = tmp_path / "out"
    env = {**os.environ, "CITADEL_HOME": str(tmp_path / "home")}
    env.pop("CITADEL_EMBEDDER", None)
    proc = subprocess.run(
        [sys.executable, "-m", "citadel", "eval", "--suite", "support", "--dataset", DATASET,
         "--limit", str(QUESTIONS_PER_KB), "--out", str(out), "--quiet"],
        capture_output=True, text=True, env=env, timeout=3600, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads((out / "results.json").read_text())
    for key in ("citation_integrity", "quote_validity"):
        assert results["metrics"].get(key, 1.0) == 1.0, results["failures"].get(key)
    kbs = results["dataset"]["kbs"]
    assert results["decisions"]["overall"]["all"]["total"] == sum(
        min(n, QUESTIONS_PER_KB) for n in kbs.values())
    assert "<h2>Decisions</h2>" in (out / "report.html").read_text()
