"""Real PDF samples (read-only, beside the repository at ../shared/data/pdf-samples) and
Word files generated for the tests."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import ROOT

SAMPLES = ROOT.parent / "shared" / "data" / "pdf-samples"
PASSWORD_PDF = "libreoffice-writer-password.pdf"
PASSWORD = "openpassword"
GEOTOPO = "GeoTopo-komprimiert.pdf"


def samples() -> Path:
    """The sample folder; a skip outside CI when it is missing (in CI, a failure)."""
    if not SAMPLES.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"PDF samples missing at {SAMPLES}")
        pytest.skip(f"PDF samples not found at {SAMPLES}")
    return SAMPLES


def described_pages() -> dict[str, int]:
    """Page counts from the samples' own description (files.json), by file name."""
    data = json.loads((samples() / "files.json").read_text())["data"]
    return {Path(row["path"]).name: row["pages"] for row in data}


def write_docx(path: Path) -> Path:
    """A Word file with a title, headings on two levels, paragraphs and a table."""
    import docx

    document = docx.Document()
    document.core_properties.title = "Service levels"
    document.add_heading("Service levels", level=0)
    document.add_paragraph("This document describes how quickly support answers.")
    document.add_heading("4.2 Thresholds", level=1)
    document.add_paragraph("A priority ticket is answered within 4 hours of being opened.")
    table = document.add_table(rows=3, cols=3)
    for r, row in enumerate((("Plan", "Response time", "Price"),
                             ("Basic", "2 business days", "£0"),
                             ("Plus", "4 hours", "£12 per month"))):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    document.add_heading("4.3 Escalation", level=2)
    document.add_paragraph("Unanswered tickets are escalated to a team lead after one day.")
    document.save(path)
    return path


def block_import(monkeypatch: pytest.MonkeyPatch, module: str) -> None:
    """Make `import module` (and its submodules) fail, as when an extra is not installed."""
    import builtins

    real_import = builtins.__import__

    def refusing(name, *args, **kwargs):
        if name == module or name.startswith(module + "."):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", refusing)
