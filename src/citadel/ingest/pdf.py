"""PDF files: the text of each page in reading order, the outline (or, without one, the
large-font headings) as sections, the metadata title (or the largest heading of page 1) as
title (pypdf, BSD-3-Clause; `pip install 'citadel[documents]'`).

The stored text of a PDF is the concatenation of its page texts, and `Document.pages` records
where each page begins: every offset into the text (a chunk's, a citation's) names its page.
A page's text is pypdf's plain extraction, tidied so that sentences survive line breaks:
ligatures spelled out, a word hyphenated at a line end joined again, and the lines of a
paragraph joined by spaces. A file that yields no usable text is refused with the reason.
"""

from __future__ import annotations

import io
import logging
import re
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

INSTALL_HINT = "PDF support is not installed: pip install 'citadel[documents]'"
# A page "has a text layer" when it carries at least this many letters or digits. A scan
# (or an image with a stray label, as ImageMagick writes) falls below it on every page.
MIN_TEXT_CHARS_PER_PAGE = 16
_LIGATURES = str.maketrans({"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi",
                            "\ufb04": "ffl", "\ufb05": "st", "\ufb06": "st"})
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ufffe\uffff]")
_SOFT_HYPHEN = re.compile(r"(?<=[a-zäöüßà-ÿ])-\n(?=[a-zäöüßà-ÿ])")
# A line at least this share of the document's usual full line length continues into the
# next one (justified body text); a shorter one (heading, formula, last line) ends a paragraph.
_JOIN_WIDTH = 0.75


class PdfError(Exception):
    """Why a PDF cannot become a document (the message is shown in the ingest report)."""


@dataclass(frozen=True)
class OutlineEntry:
    title: str
    page: int  # 0-based page index
    size: float = 0.0  # font size, for a heading found by its size


@dataclass(frozen=True)
class PdfText:
    text: str = ""
    pages: tuple[int, ...] = ()  # offset in `text` where each page begins
    outline: tuple[tuple[int, str], ...] = ()  # (offset in `text`, heading)
    title: str | None = None

    @classmethod
    def of(cls, page_texts: list[str], entries: list[OutlineEntry],
           title: str | None) -> PdfText:
        pages, offset = [], 0
        for page in page_texts:
            pages.append(offset)
            offset += len(page)
        text = "".join(page_texts)
        return cls(text=text, pages=tuple(pages), title=title,
                   outline=tuple(_place(entries, text, pages)))


def _place(entries: list[OutlineEntry], text: str, pages: list[int]) -> list[tuple[int, str]]:
    """Each outline entry's offset: where its heading is printed on its destination page
    (case-sensitive, so a running head in capitals is not taken for it), else the page's
    start. Entries keep their order: a search never goes back before the previous one."""
    placed: list[tuple[int, str]] = []
    floor = 0
    for entry in entries:
        if entry.page >= len(pages):
            continue
        start = pages[entry.page]
        end = pages[entry.page + 1] if entry.page + 1 < len(pages) else len(text)
        pattern = r"\s*".join(re.escape(word) for word in entry.title.split())
        found = re.compile(pattern).search(text, max(start, floor), end)
        offset = max(found.start() if found else start, floor)
        placed.append((offset, entry.title))
        floor = offset
    return placed


def read_pdf(raw: bytes, password: str | None = None) -> PdfText:
    """Page texts, title and outline of a PDF; `PdfError` with the reason when it has none."""
    try:
        from pypdf import PdfReader
        from pypdf.errors import DependencyError
    except ImportError:
        raise PdfError(INSTALL_HINT) from None
    with _quiet("pypdf"):
        try:
            reader = PdfReader(io.BytesIO(raw))
            _unlock(reader, password, DependencyError)
            raw_pages = []
            fonts = FontSizes()
            for number, page in enumerate(reader.pages, start=1):
                try:
                    text = page.extract_text(visitor_text=fonts.visitor(number - 1)) or ""
                    raw_pages.append((text, _draws_images(page)))
                except Exception as exc:  # a broken page stream: never half a document
                    raise PdfError(f"broken PDF: page {number}: {_describe(exc)}") from None
        except PdfError:
            raise
        except Exception as exc:  # pypdf raises many kinds of error on broken files
            raise PdfError(f"broken PDF: {_describe(exc)}") from None
        if not raw_pages:
            raise PdfError("broken PDF: it has no pages")
        headings = fonts.headings()
        # No outline: the large-font lines are the headings; no title: the largest on page 1.
        outline = _outline(reader) or headings
        first = [h for h in headings if h.page == 0]
        title = _title(reader) or (max(first, key=lambda h: h.size).title if first else None)
    pages = tidy_pages([text for text, _ in raw_pages])
    letters = sum(_letters(p) for p in pages)
    if letters < MIN_TEXT_CHARS_PER_PAGE * len(pages):
        if any(images for _, images in raw_pages):
            raise PdfError("no text layer (scanned or image-only PDF): needs OCR")
        if letters == 0:
            raise PdfError("PDF has no extractable text")
    return PdfText.of(pages, outline, title)


def _unlock(reader: Any, password: str | None, dependency_error: type[Exception]) -> None:
    if not reader.is_encrypted:
        return
    try:
        # Many PDFs are encrypted only against editing and open with the empty password.
        if password is None and reader.decrypt(""):
            return
        if password is None:
            raise PdfError("encrypted PDF: it needs a password; give it in the configuration "
                           "([pdf_passwords] \"path/in/ingest.pdf\" = \"...\")")
        if not reader.decrypt(password):
            raise PdfError("encrypted PDF: the configured password does not open it")
    except dependency_error as exc:
        raise PdfError(f"encrypted PDF: {_describe(exc)}") from None


def tidy_pages(texts: list[str]) -> list[str]:
    """Normalise each page's extracted text; a page with text ends with one newline (so no
    sentence runs from one page into the next), an empty page is empty."""
    cleaned = [_CONTROL.sub("", unicodedata.normalize("NFC", t.replace("\r\n", "\n")
                                                       .replace("\r", "\n"))
                            .translate(_LIGATURES)) for t in texts]
    width = _full_line_width(cleaned)  # measured before hyphenated lines are joined
    return [_reflow(_SOFT_HYPHEN.sub("", t), width) for t in cleaned]


def _full_line_width(texts: list[str]) -> int:
    """The length of a full line of body text: the 90th percentile of the line lengths."""
    lengths = sorted(len(line.strip()) for t in texts for line in t.splitlines()
                     if len(line.strip()) >= 20)
    return lengths[int(len(lengths) * 0.9)] if lengths else 0


def _reflow(text: str, width: int) -> str:
    """Join the lines of a paragraph: a line at least `_JOIN_WIDTH` of a full line continues
    into the next one (justified body text); a short line (heading, last line of a paragraph,
    a formula) ends its paragraph."""
    lines = [line for line in (re.sub(r"[ \t]+", " ", raw).strip() for raw in text.split("\n"))
             if line]
    if not lines:
        return ""
    parts = [lines[0]]
    for previous, line in zip(lines, lines[1:], strict=False):
        parts.append(" " if width and len(previous) >= _JOIN_WIDTH * width else "\n")
        parts.append(line)
    return "".join(parts) + "\n"


def _letters(text: str) -> int:
    return sum(ch.isalnum() for ch in text)


def _draws_images(page: Any, depth: int = 0) -> bool:
    """Whether the page's resources hold an image (directly or inside a form XObject)."""
    try:
        resources = page.get("/Resources")
        xobjects = resources.get_object().get("/XObject") if resources is not None else None
        if xobjects is None:
            return False
        for ref in xobjects.get_object().values():
            obj = ref.get_object()
            if obj.get("/Subtype") == "/Image":
                return True
            if obj.get("/Subtype") == "/Form" and depth < 3 and _draws_images(obj, depth + 1):
                return True
    except Exception:  # resources we cannot read draw nothing we can see
        return False
    return False


class FontSizes:
    """Collects the text runs of every page with their effective font size (pypdf's visitor),
    to find the headings of a PDF without an outline: runs set at least `HEADING_SCALE` times
    the body size (the size that sets the most characters)."""

    HEADING_SCALE = 1.2

    def __init__(self) -> None:
        self.runs: list[tuple[int, float, str]] = []

    def visitor(self, page: int) -> Any:
        def visit(text: str, cm: list[float], tm: list[float], font: Any, size: float) -> None:
            if text.strip() and size:
                # The text matrix times the current transformation: its scale is the size.
                a, b = tm[0] * cm[0] + tm[1] * cm[2], tm[0] * cm[1] + tm[1] * cm[3]
                c, d = tm[2] * cm[0] + tm[3] * cm[2], tm[2] * cm[1] + tm[3] * cm[3]
                self.runs.append((page, round(size * abs(a * d - b * c) ** 0.5, 1), text))
        return visit

    def headings(self) -> list[OutlineEntry]:
        chars: dict[float, int] = {}
        for _, size, text in self.runs:
            chars[size] = chars.get(size, 0) + len(text)
        if not chars:
            return []
        body = max(chars, key=chars.__getitem__)
        found: list[OutlineEntry] = []
        previous: tuple[int, float] | None = None
        for page, size, text in self.runs:
            line = _clean_line(text)
            if size < self.HEADING_SCALE * body or not line:
                previous = None
                continue
            if previous == (page, size) and found:  # one heading set in several runs
                found[-1] = OutlineEntry(f"{found[-1].title} {line}", page, size)
            else:
                found.append(OutlineEntry(line, page, size))
            previous = (page, size)
        return [h for h in found if 2 <= len(h.title) <= 120
                and any(ch.isalpha() for ch in h.title)]


def _clean_line(text: str) -> str:
    """A heading or title as the tidied page text spells it."""
    text = _CONTROL.sub("", unicodedata.normalize("NFC", text).translate(_LIGATURES))
    return re.sub(r"\s+", " ", text).strip()


def _title(reader: Any) -> str | None:
    try:
        meta = reader.metadata
        title = meta.title if meta is not None else None
    except Exception:  # unreadable metadata is no reason to refuse the text
        return None
    if not isinstance(title, str):
        return None
    title = _clean_line(title)
    return title if any(ch.isalnum() for ch in title) else None


def _outline(reader: Any) -> list[OutlineEntry]:
    try:
        return list(_walk(reader, reader.outline))
    except Exception:  # an unreadable (or absurdly deep) outline: sections by font size
        return []


def _walk(reader: Any, items: list[Any]) -> Iterator[OutlineEntry]:
    """The outline's entries in order, nested ones in place (pypdf nests them in lists)."""
    for item in items:
        if isinstance(item, list):
            yield from _walk(reader, item)
            continue
        try:
            page = reader.get_destination_page_number(item)
            title = _clean_line(str(item.title or ""))
        except Exception:  # an entry pointing nowhere is no section
            continue
        if page is not None and page >= 0 and title:
            yield OutlineEntry(title=title, page=page)


def _describe(exc: BaseException) -> str:
    message = re.sub(r"\s+", " ", str(exc)).strip()[:200]
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


@contextmanager
def _quiet(logger_name: str) -> Iterator[None]:
    """pypdf logs every repair it makes to a broken file; the ingest report says what matters
    (the file's refusal), so its warnings are kept off the console while it parses."""
    logger = logging.getLogger(logger_name)
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)
