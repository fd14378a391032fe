"""Word documents (.docx): paragraphs in order, headings as sections, tables as text rows
(python-docx, MIT; `pip install 'citadel[documents]'`).

The stored text is a plain rendering, like the HTML loader's: one block per paragraph, a
heading as a Markdown `#` line (so chunking finds sections the same way), a table row as its
cells joined by ` | `. Offsets point into that stored text.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from typing import Any

INSTALL_HINT = "Word support is not installed: pip install 'citadel[documents]'"
_HEADING_STYLE = re.compile(r"heading\s*([1-6])$", re.I)


class WordError(Exception):
    """Why a .docx cannot become a document (the message is shown in the ingest report)."""


@dataclass(frozen=True)
class WordText:
    text: str
    title: str | None


def read_docx(raw: bytes) -> WordText:
    try:
        import docx
    except ImportError:
        raise WordError(INSTALL_HINT) from None
    try:
        document = docx.Document(io.BytesIO(raw))
        blocks = list(_blocks(document))
        core_title = (document.core_properties.title or "").strip()
    except Exception as exc:  # a zip that is no Word file, a broken part, ...
        message = re.sub(r"\s+", " ", str(exc)).strip()[:200]
        raise WordError(f"broken DOCX: {type(exc).__name__}: {message}") from None
    text = "\n\n".join(blocks)
    if not text.strip():
        raise WordError("DOCX has no text")
    first_heading = next((b.lstrip("#").strip() for b in blocks if b.startswith("#")), None)
    return WordText(text=text + "\n", title=core_title or first_heading)


def _blocks(document: Any) -> Any:
    for item in document.iter_inner_content():
        if hasattr(item, "rows"):
            yield from _table_rows(item)
            continue
        text = _clean(item.text)
        if not text:
            continue
        level = _heading_level(item)
        yield f"{'#' * level} {text}" if level else text


def _heading_level(paragraph: Any) -> int:
    try:
        name = paragraph.style.name if paragraph.style is not None else ""
    except Exception:  # a paragraph whose style is missing from the styles part
        return 0
    if name.lower() == "title":
        return 1
    m = _HEADING_STYLE.match(name.strip())
    return int(m.group(1)) if m else 0


def _table_rows(table: Any) -> Any:
    for row in table.rows:
        cells: list[str] = []
        seen: list[Any] = []
        for cell in row.cells:
            if any(cell._tc is s for s in seen):  # a merged cell repeats itself
                continue
            seen.append(cell._tc)
            cells.append(_clean(cell.text))
        if any(cells):
            yield " | ".join(cells)


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()
