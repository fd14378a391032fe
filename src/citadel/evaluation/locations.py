"""Where the evaluation's inputs are by default: the project checkout's `eval/` folder,
`examples/support-kb`, and the shared SciFact and SQuAD 2.0 data."""

from __future__ import annotations

from pathlib import Path

from citadel.evaluation.scifact import find_data
from citadel.evaluation.squad2 import find_squad2


def project_root() -> Path:
    """The checkout holding `eval/` and `examples/`: the working directory if it has them,
    else the one this package was installed from (editable installs)."""
    package_root = Path(__file__).resolve().parents[3]
    for candidate in (Path.cwd(), package_root):
        if (candidate / "eval").is_dir() and (candidate / "examples").is_dir():
            return candidate
    return Path.cwd()


def default_dataset(suite: str) -> Path | None:
    root = project_root()
    if suite == "demo":
        return root / "eval" / "qa.jsonl"
    if suite == "poison":
        return root / "eval" / "poison_cases.jsonl"
    if suite == "counterfactual":
        return root / "eval" / "counterfactual.jsonl"
    if suite == "conversations":  # shipped inside the package: it runs from any checkout
        return Path(__file__).parent / "data" / "conversations.jsonl"
    if suite == "squad2":
        return find_squad2(root)
    return find_data(root)


def default_kb() -> Path:
    return project_root() / "examples" / "support-kb"
