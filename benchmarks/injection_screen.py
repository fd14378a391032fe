"""How the injection screen and the hidden-text check do on planted and honest text.

    PYTHONPATH=src python benchmarks/injection_screen.py [--catalogs] [--json out.json]

1. The fixture pages in tests/ingest/data (planted/ with manifest.json, clean/): each page is
   loaded and chunked by the real loader and chunker; a planted page counts as flagged when
   every chunk holding its planted text is flagged, a clean page as a false flag when any of
   its chunks is. The same figures are asserted by tests/ingest/test_planted_pages.py.
2. With --catalogs, honest text in the screen's seven languages that nobody wrote for it: the
   messages of every gettext catalog (`*.mo`) installed on this machine for de, fr, es, it,
   nl and pt (the translations) and their English originals, each message screened alone.
   Nothing is downloaded; the figures depend on what the machine has installed.

Run it on another checkout (PYTHONPATH=/path/to/other/src) to compare rule sets.
"""

from __future__ import annotations

import argparse
import gettext
import json
import sys
from collections import Counter
from pathlib import Path

from citadel.ingest.chunking import chunk_document
from citadel.ingest.injection import scan
from citadel.ingest.loaders import load_corpus

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "ingest" / "data"
LANGUAGES = ("de", "fr", "es", "it", "nl", "pt", "pt_BR")


def fixture_figures() -> dict[str, object]:
    manifest = json.loads((DATA / "planted" / "manifest.json").read_text("utf-8"))
    docs = {d.source: d for d in load_corpus([DATA / "planted"]).documents}
    missed = []
    for name, case in manifest.items():
        doc = docs.get(name)
        holding = ([c for c in chunk_document(doc) if case["planted"] in c.content]
                   if doc else [])
        if not holding or not all(c.suspicious for c in holding):
            missed.append(name)
    clean = load_corpus([DATA / "clean"]).documents
    false_flags = sorted({d.source for d in clean for c in chunk_document(d) if c.suspicious})
    return {"planted": len(manifest), "planted_flagged": len(manifest) - len(missed),
            "missed": missed, "clean": len(clean), "clean_flagged": len(false_flags),
            "false_flags": false_flags}


def catalog_messages() -> dict[str, set[str]]:
    """Messages by language ("en" for the originals) from the machine's gettext catalogs."""
    roots = [Path("/usr/share/locale"), *(Path(p) for p in sys.path if p.endswith("-packages"))]
    messages: dict[str, set[str]] = {}
    for root in roots:
        for lang in LANGUAGES:
            for mo in root.glob(f"**/{lang}/LC_MESSAGES/*.mo"):
                try:
                    with mo.open("rb") as f:
                        catalog = gettext.GNUTranslations(f)._catalog  # type: ignore[attr-defined]
                except (OSError, UnicodeDecodeError, ValueError):  # not a readable catalog
                    continue
                for key, value in catalog.items():
                    original = key[0] if isinstance(key, tuple) else key
                    if original and value:
                        messages.setdefault("en", set()).add(original)
                        messages.setdefault(lang[:2], set()).add(value)
    return messages


def catalog_figures() -> dict[str, object]:
    figures: dict[str, object] = {}
    for lang, texts in sorted(catalog_messages().items()):
        flagged = [(t, [f.rule for f in scan(t)]) for t in sorted(texts)]
        flagged = [(t, rules) for t, rules in flagged if rules]
        figures[lang] = {"messages": len(texts), "flagged": len(flagged),
                         "rules": dict(Counter(r for _, rules in flagged for r in set(rules))),
                         "examples": [t[:120] for t, _ in flagged[:10]]}
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--catalogs", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    result: dict[str, object] = {"fixtures": fixture_figures()}
    f = result["fixtures"]
    print(f"planted pages flagged: {f['planted_flagged']}/{f['planted']}"  # type: ignore[index]
          f"  missed: {f['missed']}")  # type: ignore[index]
    print(f"clean pages with a flag: {f['clean_flagged']}/{f['clean']}"  # type: ignore[index]
          f"  {f['false_flags']}")  # type: ignore[index]
    if args.catalogs:
        result["catalogs"] = catalog_figures()
        for lang, c in result["catalogs"].items():  # type: ignore[union-attr]
            print(f"{lang}: {c['flagged']} of {c['messages']} catalog messages flagged "
                  f"{c['rules']}")
            for example in c["examples"]:
                print(f"    {example!r}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
