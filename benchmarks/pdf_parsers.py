"""PDF text extraction: pypdf (Citadel's parser) against pypdfium2 and pdfminer.six on the
14 samples in ../shared/data/pdf-samples, then Citadel's own PDF loading on the 117-page
lecture script (GeoTopo-komprimiert.pdf).

    .venv/bin/python benchmarks/pdf_parsers.py              # every parser that is installed
    .venv/bin/pip install pypdfium2 pdfminer.six            # the alternatives (not project deps)

Timing runs in this one process, the parsers interleaved round by round, `--repeat` rounds,
best round per file: CPU seconds of opening a sample and extracting the text of every page
(wall seconds too; on a shared machine CPU time is the steadier of the two), ratios against
pypdf measured in the same process. Memory: each parser in a fresh subprocess, peak RSS
(VmHWM) minus the RSS after imports, read from /proc/self/status. The extracted text of a
few pages is written to `benchmarks/results/pdf_text/<parser>/` for checking by eye.
Results: a table on stdout and `benchmarks/results/pdf_parsers.json`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT.parent / "shared" / "data" / "pdf-samples"
RESULTS = ROOT / "benchmarks" / "results"
GEOTOPO = "GeoTopo-komprimiert.pdf"
PASSWORD = {"libreoffice-writer-password.pdf": "openpassword"}
# Pages written out for the eye check: (file, 1-based page).
EYE_CHECK = ((GEOTOPO, 12), ("multicolumn.pdf", 1), ("habibi.pdf", 1), ("crazyones-pdfa.pdf", 1))
PARSERS = ("pypdf", "pypdfium2", "pdfminer", "citadel")
LICENCES = {"pypdf": "BSD-3-Clause (pure Python)",
            "pypdfium2": "Apache-2.0 / BSD-3-Clause (binds Google's PDFium, C++ binary wheel)",
            "pdfminer": "MIT (pure Python)",
            "citadel": "pypdf + Citadel's page tidying (citadel.ingest.pdf)"}


def memory_kb() -> tuple[int, int]:
    """(current RSS, peak RSS) of this process in kB."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text()
                  .splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


def extract_pypdf(path: Path) -> list[str]:
    from pypdf import PdfReader

    reader = PdfReader(path)
    if reader.is_encrypted:
        reader.decrypt(PASSWORD.get(path.name, ""))
    return [page.extract_text() or "" for page in reader.pages]


def extract_pypdfium2(path: Path) -> list[str]:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(path, password=PASSWORD.get(path.name))
    try:
        return [pdf[i].get_textpage().get_text_range() for i in range(len(pdf))]
    finally:
        pdf.close()


def extract_pdfminer(path: Path) -> list[str]:
    from pdfminer.high_level import extract_pages
    from pdfminer.layout import LTTextContainer

    return ["".join(e.get_text() for e in page if isinstance(e, LTTextContainer))
            for page in extract_pages(path, password=PASSWORD.get(path.name, ""))]


def extract_citadel(path: Path) -> list[str]:
    from citadel.ingest.loaders import load_file

    doc = load_file(path, path.name, password=PASSWORD.get(path.name))
    bounds = [*doc.pages, len(doc.text)]
    return [doc.text[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


def extractor(parser: str):
    import logging

    logging.disable(logging.WARNING)  # the parsers' repair warnings on broken files
    sys.path.insert(0, str(ROOT / "src"))
    extract = globals()[f"extract_{parser}"]
    extract(SAMPLES / "minimal-document.pdf")  # imports are not part of any measurement
    return extract


def attempt(extract, path: Path) -> tuple[list[str], str | None]:
    try:
        return extract(path), None
    except Exception as exc:
        return [], f"{type(exc).__name__}: {str(exc)[:120]}"


def measure_memory(parser: str, files: list[Path]) -> dict:
    """In a subprocess of its own: peak RSS over the RSS after imports, for the lecture script
    alone (read first) and for all samples; and the text of the eye-check pages."""
    extract = extractor(parser)
    rss_before, _ = memory_kb()
    out: dict = {}
    for path in sorted(files, key=lambda p: p.name != GEOTOPO):
        pages, _ = attempt(extract, path)
        if path.name == GEOTOPO:
            out["geotopo_peak_mb"] = round((memory_kb()[1] - rss_before) / 1024, 1)
        for name, number in EYE_CHECK:
            if name == path.name and len(pages) >= number:
                dest = RESULTS / "pdf_text" / parser / f"{Path(name).stem}-p{number}.txt"
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_text(pages[number - 1], encoding="utf-8")
    out["all_peak_mb"] = round((memory_kb()[1] - rss_before) / 1024, 1)
    return out


def measure_time(parsers: list[str], files: list[Path], repeat: int) -> dict:
    """In this one process, the parsers interleaved round by round (so a busy machine slows
    them alike); per file the best of `repeat` rounds, CPU seconds and wall seconds."""
    extracts = {p: extractor(p) for p in parsers}
    out: dict = {p: {} for p in parsers}
    for _ in range(repeat):
        for parser in parsers:
            for path in files:
                cpu, wall = time.process_time(), time.perf_counter()
                pages, error = attempt(extracts[parser], path)
                cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
                best = out[parser].get(path.name)
                if best is None or cpu < best["cpu_s"]:
                    out[parser][path.name] = {
                        "pages": len(pages), "chars": sum(len(p) for p in pages),
                        "cpu_s": round(cpu, 4), "wall_s": round(wall, 4), "error": error}
    return out


def available(parser: str) -> bool:
    module = {"pypdfium2": "pypdfium2", "pdfminer": "pdfminer", "citadel": "pypdf",
              "pypdf": "pypdf"}[parser]
    try:
        __import__(module)
    except ImportError:
        print(f"{parser}: not installed, not measured")
        return False
    return True


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--memory-of", help=argparse.SUPPRESS)
    args = ap.parse_args()
    files = sorted(SAMPLES.glob("*.pdf"))
    if args.memory_of:
        print(json.dumps(measure_memory(args.memory_of, files)))
        return
    if not SAMPLES.is_dir():
        raise SystemExit(f"PDF samples not found at {SAMPLES}")
    sys.path.insert(0, str(ROOT / "src"))
    parsers = [p for p in PARSERS if available(p)]
    load_before = os.getloadavg()[0]
    timing = measure_time(parsers, files, args.repeat)
    memory = {}
    for parser in parsers:
        proc = subprocess.run([sys.executable, __file__, "--memory-of", parser],
                              capture_output=True, text=True, check=True)
        memory[parser] = json.loads(proc.stdout.strip().splitlines()[-1])
    load_after = os.getloadavg()[0]
    report(timing, memory, load_before, load_after)


def report(timing: dict, memory: dict, load_before: float, load_after: float) -> None:
    base = timing["pypdf"][GEOTOPO]["cpu_s"] if "pypdf" in timing else None
    print(f"load average (1 min): {load_before:.1f} at start, {load_after:.1f} at end\n")
    print("| parser | samples with text | pages | all 14: CPU s | GeoTopo (117 p.): CPU s "
          "(wall s) | pages/s (CPU) | speed vs pypdf | peak MB GeoTopo | peak MB all "
          "| licence |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for parser, files in timing.items():
        ok = sum(1 for f in files.values() if f["error"] is None and f["chars"])
        pages = sum(f["pages"] for f in files.values())
        total = sum(f["cpu_s"] for f in files.values())
        geo = files[GEOTOPO]
        rate = geo["pages"] / geo["cpu_s"] if geo["cpu_s"] else 0.0
        ratio = base / geo["cpu_s"] if base and geo["cpu_s"] else float("nan")
        mem = memory[parser]
        print(f"| {parser} | {ok}/{len(files)} | {pages} | {total:.2f} | {geo['cpu_s']:.2f} "
              f"({geo['wall_s']:.2f}) | {rate:.1f} | {ratio:.2f}× | {mem['geotopo_peak_mb']} "
              f"| {mem['all_peak_mb']} | {LICENCES[parser]} |")
    print("\nFailures:")
    for parser, files in timing.items():
        for name, f in files.items():
            if f["error"]:
                print(f"  {parser}: {name}: {f['error']}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "pdf_parsers.json").write_text(json.dumps(
        {"loadavg_1min_before_after": [load_before, load_after], "timing": timing,
         "memory": memory}, indent=2))
    print(f"\nText of {len(EYE_CHECK)} pages per parser: {RESULTS / 'pdf_text'}")


if __name__ == "__main__":
    main()
