"""Fetched pages become documents, holding each page's own content.

A page is read by the loaders every file goes through (`loaders.read_document` for HTML,
Markdown and text, `loaders.parse_binary` for PDF and Word), with the page's canonical URL
as its source and id. An HTML page is read without its navigation chrome (`nav`, menus, the
site's header, footer and sidebars: `loaders._chrome`), and without the blocks its site
repeats on most pages (`repeated_blocks`: a "Contact us" box, "Was this article helpful?",
a cookie notice), so that chunks hold what the page says, not what every page says. The
operator's metadata (`[sources."https://…/*"]`) applies by URL, as it does by path for files.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from citadel.ingest.loaders import (
    Loaded,
    LoadError,
    Skipped,
    admit,
    parse_binary,
    read_document,
    universal_newlines,
)
from citadel.ingest.operator_metadata import SourceMetadata, metadata_for
from citadel.ingest.web.crawl import Page
from citadel.records import Document

# A block is the site's when it stands on more than half of its pages, and on at least this
# many (two pages sharing a paragraph is a coincidence, not a template).
REPEATED_MIN_PAGES = 3
_WORD = re.compile(r"\w")


@dataclass
class PageDocuments:
    documents: list[Document] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    ignored_front_matter: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)


def page_documents(pages: Sequence[Page], rules: Mapping[str, SourceMetadata]
                   ) -> PageDocuments:
    """The documents of one site's pages (`rules`: the operator's `[sources]` entries)."""
    out = PageDocuments()
    loaded: list[tuple[Page, Loaded]] = []
    for page in pages:
        try:
            loaded.append((page, _read(page)))
        except LoadError as exc:
            out.skipped.append(Skipped(page.source, _without_chrome(str(exc))))
    repeated = repeated_blocks([one.document.text for page, one in loaded
                                if page.format == "html"])
    for page, one in loaded:
        try:
            if page.format == "html" and repeated & set(_blocks(one.document.text)):
                one = _read(page, repeated)
            doc = admit(one, metadata_for(rules, page.source))
        except LoadError as exc:
            out.skipped.append(Skipped(page.source, _without_chrome(str(exc))))
            continue
        if one.claims:
            out.ignored_front_matter.append((page.source, one.claims))
        out.documents.append(doc)
    return out


def repeated_blocks(texts: Sequence[str]) -> frozenset[str]:
    """The blocks (paragraphs, headings, list items of extracted HTML) on more than half of
    these pages, and on at least REPEATED_MIN_PAGES. Table lines and blocks without a letter
    or digit are never counted: a table's `|---|` rule is on every page that has a table."""
    counts = Counter(block for text in texts for block in set(_blocks(text))
                     if _WORD.search(block) and not block.startswith("|"))
    need = max(REPEATED_MIN_PAGES, len(texts) // 2 + 1)
    return frozenset(block for block, n in counts.items() if n >= need)


def _blocks(text: str) -> list[str]:
    """Extracted HTML is its blocks joined by blank lines (`loaders.extract_html`)."""
    return text.rstrip("\n").split("\n\n")


def _read(page: Page, drop_blocks: frozenset[str] = frozenset()) -> Loaded:
    fetched = page.fetched
    if page.format in ("pdf", "docx"):
        return Loaded(parse_binary(fetched.body, page.source, page.format))
    text = universal_newlines(fetched.text())
    if not text.strip():
        raise LoadError("empty page")
    return read_document(text, page.source, page.format, page_only=True,
                         drop_blocks=drop_blocks)


def _without_chrome(reason: str) -> str:
    if reason == "HTML has no visible text":
        return ("no text of its own (only navigation and blocks the site repeats on most "
                "pages)")
    return reason
