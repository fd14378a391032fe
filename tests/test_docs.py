"""The documentation stands alone: README.md and docs/*.md link only to files inside the
repository (and to headings that exist), point nowhere outside it, and the README stays short.

Links are read as GitHub renders them: inline links `[text](target)` outside code, and
heading anchors as GitHub slugs them (lower case, punctuation removed, spaces to hyphens,
`-1`, `-2`, … for repeated headings)."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
README_MAX_LINES = 300

FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_CODE = re.compile(r"(`+).*?\1")
LINK = re.compile(r"\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*([^()\s]*)(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")  # http:, https:, mailto:, ...
# A relative path climbing out of the folder it is written in (`../x`, `../../x`), in text
# or code alike: resolved from the page's folder, it must stay inside the repository.
CLIMB = re.compile(r"(?<![\w./-])((?:\.\./)+[\w.@~+-][\w./@~+-]*)")


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) outside fenced code blocks, with inline code removed."""
    lines, in_fence = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        if not in_fence:
            lines.append((number, INLINE_CODE.sub("", line)))
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)  # \w is Unicode-aware: é and ß stay, like GitHub
    return text.replace(" ", "-")


def headings_of(page: Path) -> set[str]:
    """Anchors of every heading, computed from the raw line (inline code included)."""
    seen: dict[str, int] = {}
    found = set()
    in_fence = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        match = None if in_fence else HEADING.match(line)
        if match:
            base = slug(match.group(2))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(page: Path) -> list[tuple[int, str]]:
    """(line number, target) of every inline link outside code."""
    return [(number, match.group(1))
            for number, line in prose_lines(page.read_text(encoding="utf-8"))
            for match in LINK.finditer(line)]


def inside_repository(path: Path) -> bool:
    return path.resolve().is_relative_to(ROOT)


def broken_links(page: Path) -> list[str]:
    problems = []
    for number, target in links(page):
        where = f"{page.relative_to(ROOT)}:{number}: {target}"
        if EXTERNAL.match(target):
            continue
        path_part, _, fragment = target.partition("#")
        path = (page.parent / unquote(path_part)) if path_part else page
        if not inside_repository(path):
            problems.append(f"{where} (outside the repository)")
        elif not path.exists():
            problems.append(f"{where} (no such file)")
        elif fragment and path.suffix == ".md" and unquote(fragment) not in headings_of(path):
            problems.append(f"{where} (no heading with that anchor)")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves_to_a_file_and_heading_in_the_repository(page):
    assert broken_links(page) == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_text_points_at_the_shared_folder_or_outside_the_repository(page):
    text = page.read_text(encoding="utf-8")
    problems = [f"line {n}: {line.strip()}" for n, line in enumerate(text.splitlines(), 1)
                if "../shared" in line]
    problems += [f"climbs out of the repository: {m.group(1)}" for m in CLIMB.finditer(text)
                 if not inside_repository(page.parent / m.group(1))]
    assert problems == []


def test_readme_is_short():
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; move detail into docs/"


def test_every_docs_page_is_linked_from_the_readme():
    linked = {(README.parent / target.partition("#")[0]).resolve()
              for _, target in links(README) if not EXTERNAL.match(target)}
    unlinked = [p.name for p in PAGES[1:] if p.resolve() not in linked]
    assert unlinked == []


# The checker itself: anchors and links are found the way GitHub renders them.

def test_slug_follows_github():
    assert slug("Why pypdf: measured against pypdfium2 and pdfminer.six") == \
        "why-pypdf-measured-against-pypdfium2-and-pdfminersix"
    assert slug("Several worker processes: `citadel serve --workers N`") == \
        "several-worker-processes-citadel-serve---workers-n"
    assert slug("Server backends: Qdrant and PostgreSQL + pgvector") == \
        "server-backends-qdrant-and-postgresql--pgvector"
    assert slug("See [the docs](docs/x.md) — now") == "see-the-docs--now"


def test_broken_links_are_reported(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "b.md").write_text("# Title\n\n## Part two\n## Part two\n")
    page = tmp_path / "docs" / "a.md"
    page.write_text("[ok](b.md#part-two-1) [ok](https://example.org/x) `[code](nowhere.md)`\n"
                    "[gone](c.md) [anchor](b.md#part-three) [out](../../elsewhere/x.md)\n"
                    "```\n[in a fence](nowhere.md)\n```\n")
    assert [p.split(": ", 1)[1] for p in broken_links(page)] == [
        "c.md (no such file)",
        "b.md#part-three (no heading with that anchor)",
        "../../elsewhere/x.md (outside the repository)",
    ]
