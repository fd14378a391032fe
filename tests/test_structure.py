"""Structural guarantees that are easiest to pin by reading the source."""

import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "citadel"


def test_only_the_gate_constructs_citations():
    pattern = re.compile(r"\bCitation\s*\(|Citation\.model_construct|Citation\.model_validate")
    offenders = [
        str(p.relative_to(SRC))
        for p in SRC.rglob("*.py")
        if p.relative_to(SRC).as_posix() not in {"gate.py", "records.py"}
        and pattern.search(p.read_text())
    ]
    assert offenders == []
