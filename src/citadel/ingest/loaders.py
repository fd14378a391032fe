"""Loading files into `Document`s: Markdown (with front matter, `citadel.ingest.front_matter`),
plain text, HTML, and (with the `documents` extra) PDF and Word files (`citadel.ingest.pdf`,
`citadel.ingest.word`).

A Markdown or plain-text document's text is the file itself as Python reads it (`open(path,
encoding="utf-8").read()`), so that offsets index the file; its body, what is chunked and
shown, starts after a byte-order mark and the front matter (`Document.body_start`). HTML, PDF
and Word documents hold the text extracted from the file.

A file that cannot be used is reported as a `Skipped` entry with a reason, never raised:
one bad file must not stop an ingest of thousands.

A document's id is its path relative to the ingest root, without the extension, lower case,
runs of other characters than `a-z 0-9 . _ -` made one `-` (`refunds-policy-2023.md` ->
`refunds-policy-2023`). It depends on that path alone, never on which other files exist, so
an operator rule or a `supersedes` that names it keeps naming it. Two files whose paths map to
one id (`faq.md` and `faq.txt`, `Refunds Policy.txt` and `refunds-policy.md`) are an error
naming both (`DocumentIdCollision`): disambiguating one of them would rename it silently. A
web page's source is its URL, and its id the URL's host and path, slugged the same way
(`https://help.example.com/help/returns.html` -> `help.example.com/help/returns`).
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import hashlib
import os
import re
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlsplit

from citadel.config import ConfigError
from citadel.ingest.front_matter import FrontMatterError, read_front_matter
from citadel.ingest.operator_metadata import (
    SOURCES_FILE,
    SourceMetadata,
    apply_metadata,
    matches,
    metadata_for,
    read_sources_file,
)
from citadel.ingest.visibility import ROOT, Cascade, Element, Style, page_cascade
from citadel.ingest.web.urls import is_url
from citadel.records import Document

FORMATS = {
    ".md": "markdown", ".markdown": "markdown", ".txt": "text", ".html": "html", ".htm": "html",
    ".pdf": "pdf", ".docx": "docx",
}
_SLUG_UNSAFE = re.compile(r"[^a-z0-9._-]+")
BOM = "\ufeff"  # kept in a Markdown or text document's text, as Python's "utf-8" reads it


@dataclass(frozen=True)
class Skipped:
    path: str
    reason: str


@dataclass(frozen=True)
class LoadedCorpus:
    documents: tuple[Document, ...]
    skipped: tuple[Skipped, ...]
    # (path, fields) of each Markdown file whose front matter names fields that only the
    # operator sets (OPERATOR_META): loaded, with those fields ignored.
    ignored_front_matter: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # `[sources."<path or glob>"]` entries of an ingested folder's citadel-sources.toml that
    # match no file in it (or no page of its websites), each said as "<folder>/citadel-
    # sources.toml: [sources.'<key>'] matches no file of that folder".
    unmatched_sources: tuple[str, ...] = ()


class DocumentIdCollision(ConfigError):
    """Two files whose paths map to one document id; the message names both."""


@dataclass(frozen=True)
class Loaded:
    """One file's document, and the OPERATOR_META fields its front matter named (ignored)."""

    document: Document
    claims: tuple[str, ...] = ()


# Why a Markdown file whose front matter names a tenant the operator did not confirm is left
# out: ignoring the field would serve a document its author meant for one tenant to everyone.
TENANT_CLAIM = ("front matter names a tenant, which only the operator's citadel-sources.toml "
                "sets: left out rather than shown to every tenant (set its tenant under "
                "[sources.\"{path}\"] there)")


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def discover(paths: Iterable[Path]) -> Iterator[tuple[Path, Path] | Skipped]:
    """Yield (file, ingest_root) for every non-hidden file under the given paths, sorted, and
    a `Skipped` for every entry of a folder that is not read (see `walk`). A path given
    explicitly is the operator's choice and is read even when it is a link."""
    for root in paths:
        if root.is_file():
            yield root, root.parent
        elif root.is_dir():
            for entry in walk(root):
                yield entry if isinstance(entry, Skipped) else (entry, root)
        else:
            raise FileNotFoundError(f"no such file or directory: {root}")


def walk(root: Path) -> list[Path | Skipped]:
    """The non-hidden regular files under `root`, sorted, then what was left out and why.

    Symbolic links inside the folder are never followed: one pointing outside the ingest
    root would serve a file the operator never chose (`passwd.txt -> /etc/passwd`), and one
    pointing inside it would ingest its target twice or loop; the target of an inside link is
    ingested under its own path anyway. A folder that cannot be listed (removed or made
    unreadable during the walk) is reported and the walk goes on: one folder must not abort
    an ingest of thousands of files."""
    real_root = root.resolve()
    files: list[Path] = []
    skipped: list[Skipped] = []

    def rel(path: Path | str) -> str:
        return Path(path).relative_to(root).as_posix()

    def unreadable(exc: OSError) -> None:
        where = rel(exc.filename) if exc.filename else "."
        skipped.append(Skipped(where, f"folder could not be read: {exc.strerror or exc}"))

    for folder, dirs, names in os.walk(root, onerror=unreadable):
        here = Path(folder)
        if here == root:
            names = [n for n in names if n != SOURCES_FILE]  # settings, not a document
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))  # hidden folders: never
        for name in [*dirs, *names]:
            path = here / name
            if name.startswith(".") or not path.is_symlink():
                continue
            skipped.append(Skipped(rel(path), _link_reason(path, real_root)))
        files.extend(here / n for n in names
                     if not n.startswith(".") and not (here / n).is_symlink()
                     and (here / n).is_file())
    return [*sorted(files), *sorted(skipped, key=lambda s: s.path)]


def _link_reason(link: Path, real_root: Path) -> str:
    target = Path(os.path.realpath(link))
    if not target.exists():
        return "broken symbolic link: not followed"
    if not target.is_relative_to(real_root):
        return "symbolic link to outside the ingest root: not followed"
    inside = target.relative_to(real_root).as_posix()
    return f"symbolic link to {inside}: not followed (links are never followed; a target " \
           "inside the ingest root is ingested under its own path)"


def load_corpus(paths: Iterable[Path], max_file_bytes: int = 10_000_000,
                passwords: Mapping[str, str] | None = None) -> LoadedCorpus:
    """`passwords` maps a PDF's path (relative to its ingest root, or a glob) to its password.
    Each ingest root's `citadel-sources.toml` (`operator_metadata`) sets the metadata the
    operator vouches for; a malformed one is a `ConfigError`."""
    paths = list(paths)
    folders = {p for p in paths if p.is_dir()}
    documents: list[Document] = []
    skipped: list[Skipped] = []
    ignored: list[tuple[str, tuple[str, ...]]] = []
    seen_ids: dict[str, Path] = {}
    tables: dict[Path, dict[str, SourceMetadata]] = {}
    folder_files: dict[Path, list[str]] = {}  # per folder given: every file found in it
    for found in discover(paths):
        if isinstance(found, Skipped):
            skipped.append(found)
            continue
        file, root = found
        rel = file.relative_to(root).as_posix()
        if root not in tables:
            tables[root] = read_sources_file(root)
        if root in folders:
            folder_files.setdefault(root, []).append(rel)
        try:
            loaded = read_file(file, rel, max_file_bytes, password_for(passwords or {}, rel))
            doc = admit(loaded, metadata_for(tables[root], rel))
        except LoadError as exc:
            skipped.append(Skipped(rel, str(exc)))
            continue
        if loaded.claims:
            ignored.append((rel, loaded.claims))
        first = seen_ids.setdefault(doc.document_id, file)
        if first != file:
            if first.resolve() == file.resolve():  # one file named twice (a folder and in it)
                skipped.append(Skipped(rel, "given twice: ingested once"))
                continue
            raise DocumentIdCollision(
                f"{first} and {file} would both have the document id {doc.document_id!r}: "
                "rename or move one of them (a document's id comes from its path alone, so "
                "that operator rules, `supersedes` and citations keep naming the same file)")
        documents.append(doc)
    return LoadedCorpus(tuple(documents), tuple(skipped), tuple(ignored),
                        _unmatched_sources(tables, folder_files))


def admit(loaded: Loaded, meta: SourceMetadata | None) -> Document:
    """The document with the operator's metadata (`meta`, from citadel-sources.toml) in
    place of its own. A `LoadError` when its front matter names a tenant the operator did
    not confirm (`TENANT_CLAIM`)."""
    doc = apply_metadata(loaded.document, meta)
    if "tenant" in loaded.claims and doc.tenant is None:
        raise LoadError(TENANT_CLAIM.format(path=doc.source))
    return doc


def _unmatched_sources(tables: Mapping[Path, Mapping[str, SourceMetadata]],
                       folder_files: Mapping[Path, Sequence[str]]) -> tuple[str, ...]:
    """The `[sources]` entries of each folder given that match none of its files. A file
    given by itself is read with its folder's entries, which are about the folder: those are
    not checked. An entry keyed by a URL is about a website's pages, not the folder's files
    (`citadel.ingest.sources` checks those)."""
    return tuple(
        f"{root / SOURCES_FILE}: [sources.{key!r}] matches no file of that folder"
        for root, files in folder_files.items()
        for key in tables.get(root, {})
        if not is_url(key) and not any(matches(key, rel) for rel in files))


def document_id(source: str) -> str:
    """The id of the document at `source` (its path relative to the ingest root, or its
    URL): a function of that path alone (module docstring)."""
    if is_url(source):
        parts = urlsplit(source)
        path = PurePosixPath(unquote(parts.path))
        stem = str(path.with_suffix("")) if path.name else str(path)
        return _slug(parts.netloc + stem + (f"?{unquote(parts.query)}" if parts.query else ""))
    return _slug(str(Path(source).with_suffix("")))


def _stem(source: str) -> str:
    """A name for a document without a title: its file name's stem (a URL's last path
    segment, or its host)."""
    if is_url(source):
        parts = urlsplit(source)
        return PurePosixPath(unquote(parts.path)).stem or (parts.hostname or source)
    return Path(source).stem


class LoadError(Exception):
    """A file that cannot become a document; the message is the reason shown to the user."""


def password_for(passwords: Mapping[str, str], source: str) -> str | None:
    """The configured password of a file: its exact path first, else the first matching glob."""
    if source in passwords:
        return passwords[source]
    return next((pw for pattern, pw in passwords.items() if fnmatch.fnmatchcase(source, pattern)),
                None)


def load_file(file: Path, source: str, max_file_bytes: int = 10_000_000,
              password: str | None = None) -> Document:
    return read_file(file, source, max_file_bytes, password).document


def read_file(file: Path, source: str, max_file_bytes: int = 10_000_000,
              password: str | None = None) -> Loaded:
    fmt = FORMATS.get(file.suffix.lower())
    if fmt is None:
        raise LoadError(f"unsupported file type {file.suffix or '(none)'!r}")
    try:
        size = file.stat().st_size
        if size > max_file_bytes:
            raise LoadError(f"file too large ({size:,} bytes > {max_file_bytes:,})")
        raw = file.read_bytes()
    except OSError as exc:
        raise LoadError(f"unreadable: {exc.strerror or exc}") from None
    if fmt in ("pdf", "docx"):
        return Loaded(parse_binary(raw, source, fmt, password))
    if b"\x00" in raw[:8192]:
        raise LoadError("binary file")
    try:
        decoded = universal_newlines(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise LoadError("not valid UTF-8 text") from None
    if not decoded.lstrip(BOM).strip():
        raise LoadError("empty file")
    return read_document(decoded, source, fmt)


def universal_newlines(text: str) -> str:
    """`\r\n` and a lone `\r` made `\n`, as Python's `open()` reads text by default: a
    Markdown or text file's offsets count the text as `open(path, encoding="utf-8").read()`
    returns it."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def parse_document(decoded: str, source: str, fmt: str) -> Document:
    """Build a Document from decoded text (`read_document`)."""
    return read_document(decoded, source, fmt).document


def read_document(decoded: str, source: str, fmt: str, *, page_only: bool = False,
                  drop_blocks: Collection[str] = ()) -> Loaded:
    """A document from a file's decoded text (universal newlines). Markdown and plain text
    keep that text whole, so offsets index the file; their body (what is chunked and shown)
    begins after a byte-order mark and, for Markdown, the front matter. HTML keeps the text
    extracted from the page (`extract_html`: a web page's without its navigation chrome,
    `page_only`, and without the blocks its site repeats on most pages, `drop_blocks`)."""
    meta: dict[str, str | None] = {}
    text = decoded
    body_start = 1 if decoded.startswith(BOM) else 0
    hidden_spans: tuple[tuple[int, int], ...] = ()
    flags: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    claims: tuple[str, ...] = ()
    if fmt == "markdown":
        body_start, meta, tags, claims = split_front_matter(decoded, body_start)
    elif fmt == "html":
        extracted = extract_html(decoded[body_start:], page_only=page_only,
                                 drop_blocks=drop_blocks)
        body_start = 0
        # A page describes itself (title, category, date) but never vouches for itself.
        meta = {k: v for k, v in extracted.meta.items() if k in HTML_META}
        flags = tuple(
            f"HTML <meta name={name!r}> tries to set {name} to {value[:40]!r}; only the "
            f"operator sets it" for name, value in extracted.claims)
        text = extracted.text
        hidden_spans = extracted.hidden_spans
        if not text.strip():
            raise LoadError("HTML has no visible text")
    title = (meta.get("title") or _first_heading(text[body_start:], fmt)
             or _humanize(_stem(source)))
    return Loaded(Document(
        document_id=document_id(source),
        source=source,
        title=title,
        format=fmt,  # type: ignore[arg-type]
        text=text,
        content_sha256=sha256_text(text),
        body_start=body_start,
        category=meta.get("category") or "general",
        effective_date=_parse_date(meta.get("effective_date")),
        tags=tags,
        hidden_spans=hidden_spans,
        flags=flags,
    ), claims)


def split_front_matter(
    decoded: str, start: int = 0,
) -> tuple[int, dict[str, str | None], tuple[str, ...], tuple[str, ...]]:
    """Where a Markdown file's body begins (after the front matter at `start`, and the blank
    lines after it), and what the front matter says: (body start, title/category/
    effective_date, tags, the OPERATOR_META fields it names, which are ignored). `date`
    stands for `effective_date` when that is not given."""
    try:
        front = read_front_matter(decoded[start:])
        if front is None:
            return start, {}, (), ()
        meta = {"title": front.text("title"), "category": front.text("category"),
                "effective_date": front.text("effective_date") or front.text("date")}
        tags = front.items("tags")
    except FrontMatterError as exc:
        raise LoadError(str(exc)) from None
    after = start + front.end
    body_start = len(decoded) - len(decoded[after:].lstrip("\n"))
    if not decoded[body_start:].strip():
        raise LoadError("no text after the front matter")
    return body_start, meta, tags, tuple(sorted(OPERATOR_META & front.keys))


def parse_binary(raw: bytes, source: str, fmt: str, password: str | None = None) -> Document:
    """PDF and Word files, through their own modules (imported here: an optional extra)."""
    stem = _humanize(_stem(source))
    doc_id = document_id(source)
    if fmt == "pdf":
        from citadel.ingest.pdf import PdfError, read_pdf

        try:
            pdf = read_pdf(raw, password)
        except PdfError as exc:
            raise LoadError(str(exc)) from None
        return Document(document_id=doc_id, source=source, title=pdf.title or stem,
                        format="pdf", text=pdf.text, content_sha256=sha256_text(pdf.text),
                        pages=pdf.pages, outline=pdf.outline)
    from citadel.ingest.word import WordError, read_docx

    try:
        word = read_docx(raw)
    except WordError as exc:
        raise LoadError(str(exc)) from None
    return Document(document_id=doc_id, source=source, title=word.title or stem,
                    format="docx", text=word.text, content_sha256=sha256_text(word.text))


def _first_heading(text: str, fmt: str) -> str | None:
    if fmt in ("markdown", "html"):
        m = re.search(r"^#\s+(.+?)\s*#*\s*$", text, re.M)
        if m:
            return m.group(1).strip()
    if fmt == "text":
        first = text.strip().splitlines()[0].strip()
        if 0 < len(first) <= 100:
            return first
    return None


def _parse_date(value: str | None) -> dt.date | None:
    """A date (`2026-03-01`), or the date of a date and time (`2026-03-01T09:00:00Z`)."""
    if value in (None, ""):
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        pass
    try:
        return dt.datetime.fromisoformat(value).date()
    except ValueError:
        raise LoadError(f"'effective_date' (or 'date') is not a date (YYYY-MM-DD): "
                        f"{value!r}") from None


def _slug(path: str) -> str:
    parts = [_SLUG_UNSAFE.sub("-", p.lower()).strip("-") for p in Path(path).parts]
    return "/".join(p for p in parts if p) or "document"


def _humanize(stem: str) -> str:
    return re.sub(r"[-_]+", " ", stem).strip().capitalize() or stem


# --- HTML ------------------------------------------------------------------------------------


# What an HTML page may say about itself, from its <head> only (Markdown front matter may say
# the same, and give tags). Authority, supersedes and tenant decide which text wins and whom
# it is shown to: only the operator sets them, in citadel-sources.toml (operator_metadata).
HTML_META = frozenset({"title", "category", "effective_date"})
OPERATOR_META = frozenset({"authority", "supersedes", "tenant"})


@dataclass(frozen=True)
class ExtractedHtml:
    text: str
    meta: dict[str, str]
    hidden_spans: tuple[tuple[int, int], ...] = ()
    # (name, content) of every <meta> that names an OPERATOR_META field, head or body.
    claims: tuple[tuple[str, str], ...] = ()


_BLOCK_TAGS = {"p", "div", "li", "ul", "ol", "br", "tr", "table", "section", "article",
               "header", "footer", "blockquote", "pre", "dd", "dt"}
_SKIP_TAGS = {"script", "style", "head", "noscript", "template"}
# Elements that may stand in <head>; any other start tag (or text) begins the body, as in a
# browser, so a <meta> after it is body content, not the page's metadata.
_HEAD_TAGS = {"html", "head", "meta", "title", "link", "base", "script", "style", "noscript",
              "template"}
_HEADING_TAG = re.compile(r"h[1-6]")
_VOID_TAGS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
              "param", "source", "track", "wbr"}
# Start tags that close an open element without its end tag, as a browser does (`<p>a<p>b`,
# `<li>a<li>b`), so that an unclosed element's style does not reach its siblings.
_CLOSES_P = frozenset({"address", "article", "aside", "blockquote", "details", "div", "dl",
                       "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3",
                       "h4", "h5", "h6", "header", "hgroup", "hr", "main", "menu", "nav", "ol",
                       "p", "pre", "section", "table", "ul"})
# A web page's navigation chrome (`extract_html(page_only=True)`): menus always; a header, a
# footer or a sidebar when it is the site's (outside an article, main or section: inside one
# it is that content's own, e.g. an article's byline or a note beside it), as HTML-AAM maps
# them to the banner, contentinfo and complementary landmarks.
_CHROME_TAGS = frozenset({"nav", "menu"})
_CHROME_ROLES = frozenset({"navigation", "menu", "menubar", "search"})
_LANDMARK_TAGS = frozenset({"header", "footer", "aside"})
_LANDMARK_ROLES = frozenset({"banner", "contentinfo", "complementary"})
_CONTENT_TAGS = frozenset({"article", "main", "section"})


def _chrome(element: Element, inside: Sequence[Element]) -> bool:
    role = (element.attrs.get("role") or "").strip().lower()
    if element.tag in _CHROME_TAGS or role in _CHROME_ROLES:
        return True
    if element.tag in _LANDMARK_TAGS or role in _LANDMARK_ROLES:
        return not any(e.tag in _CONTENT_TAGS or e.attrs.get("role") == "main"
                       for e in inside)
    return False


_IMPLIED_END = {"p": _CLOSES_P, "li": frozenset({"li"}), "dt": frozenset({"dt", "dd"}),
                "dd": frozenset({"dt", "dd"}), "tr": frozenset({"tr"}),
                "td": frozenset({"td", "th", "tr"}), "th": frozenset({"td", "th", "tr"}),
                "option": frozenset({"option"})}


class _Extractor(HTMLParser):
    def __init__(self, cascade: Cascade, page_only: bool = False) -> None:
        super().__init__(convert_charrefs=True)
        # `page_only`: the text of navigation chrome (`_chrome`) is left out; `chrome_at` is
        # how many elements were open outside the chrome element being skipped, if any.
        self.page_only = page_only
        self.chrome_at: int | None = None
        self.blocks: list[tuple[str, bool]] = []
        self.current: list[str] = []
        self.meta: dict[str, str] = {}
        self.claims: list[tuple[str, str]] = []
        self.in_body = False
        self.skip_depth = 0
        self.heading_level = 0
        self.in_title = False
        # Open elements, outermost first, and the Style of each (`visibility`): text is hidden
        # when the innermost one's is. `open_tags` counts the open tags so that "is this end
        # tag open?" is O(1): a membership test on the list made deeply nested pages quadratic.
        self.cascade = cascade
        self.open: list[Element] = []
        self.styles: list[Style] = []
        self.open_tags: Counter[str] = Counter()
        # A table row's cells, and whether every one is a header cell: a row becomes one
        # Markdown line "| a | b |" (and a header row its "|---|---|" rule), so that its cells
        # stay apart and a row is read with its header (`text.structure`).
        self.cells: list[str] | None = None
        self.header_row = True
        self.term: str | None = None  # a <dt>'s text, said with its <dd>: "Term: definition"
        self.item = False  # inside an <li>: its text is a Markdown list item "- text"

    def _text(self) -> str:
        text = re.sub(r"\s+", " ", "".join(self.current)).strip()
        self.current = []
        return text

    def _flush(self) -> None:
        text = self._text()
        if text:
            prefix = ("#" * self.heading_level + " " if self.heading_level else
                      "- " if self.item else "")
            self.blocks.append((prefix + text, self._hidden()))

    def _cell(self) -> None:
        if self.cells is not None:
            self.cells.append(self._text().replace("|", "/"))

    def _row(self) -> None:
        if self.cells is None:
            return
        self._cell()
        cells, self.cells = [c for c in self.cells[1:]], None  # [0]: text before the first cell
        if any(cells):
            hidden = self._hidden()
            self.blocks.append(("| " + " | ".join(cells) + " |", hidden))
            if self.header_row:
                self.blocks.append(("|" + "---|" * len(cells), hidden))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag not in _HEAD_TAGS:
            self.in_body = True
        if tag == "meta":
            name, content = (a.get("name") or "").strip().lower(), a.get("content")
            if name in OPERATOR_META and content is not None:
                self.claims.append((name, content))
            elif name and content is not None and not self.in_body:
                self.meta.setdefault(name, content)  # the first one wins, never a later copy
        elif tag == "title" and not self.in_body:
            self.in_title = True
        while self.open and tag in _IMPLIED_END.get(self.open[-1].tag, ()):
            self._pop()
        if tag not in _VOID_TAGS:
            self._push(Element.of(tag, a))
        if tag in _SKIP_TAGS:
            self.skip_depth += 1
        elif _HEADING_TAG.fullmatch(tag):
            self._flush()
            self.heading_level = int(tag[1])
        elif tag == "tr":
            self._row()
            self._flush()
            self.cells, self.header_row = [], True
        elif tag in ("td", "th") and self.cells is not None:
            self._cell()
            self.header_row = self.header_row and tag == "th"
        elif tag == "dd" and self.term is not None:
            self._flush()
            self.current, self.term = [f"{self.term}: "], None
        elif tag == "li":
            self._flush()
            self.item = True
        elif tag in _BLOCK_TAGS:
            self._flush()

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        elif tag == "head":
            self.in_body = True
        if self.open_tags[tag]:
            # Close the innermost open `tag` and every element left open inside it; each
            # element is pushed and popped once, so the whole page stays linear.
            while self._pop() != tag:
                pass
        if tag in _SKIP_TAGS:
            self.skip_depth = max(0, self.skip_depth - 1)
        elif _HEADING_TAG.fullmatch(tag):
            self._flush()
            self.heading_level = 0
        elif tag in ("tr", "table"):
            self._row()
            self._flush()
        elif tag in ("td", "th") and self.cells is not None:
            pass  # the cell ends at the next cell or the row's end
        elif tag == "dt":
            self.term = self._text().rstrip(":") or None
        elif tag == "li":
            self._flush()
            self.item = False
        elif tag in _BLOCK_TAGS:
            self._flush()

    def _hidden(self) -> bool:
        return bool(self.styles) and self.styles[-1].hidden is not None

    def _push(self, element: Element) -> None:
        parent = self.styles[-1] if self.styles else ROOT
        style = self.cascade.enter(parent, element, self.open)
        if (style.hidden is None) != (parent.hidden is None):
            self._flush()  # hidden text becomes blocks of its own, never mixed in
        if self.page_only and self.chrome_at is None and _chrome(element, self.open):
            self._flush()
            self.chrome_at = len(self.open)
        self.open.append(element)
        self.styles.append(style)
        self.open_tags[element.tag] += 1

    def _pop(self) -> str:
        outer = self.styles[-2] if len(self.styles) > 1 else ROOT
        # The text so far is the closing element's: its own block when its visibility differs
        # from what is around it, or when it is a list item (closed by `</ul>` or the next
        # `<li>` as well as by `</li>`: what follows is not part of the item).
        closing_item = self.open[-1].tag == "li"
        if (self.styles[-1].hidden is None) != (outer.hidden is None) or closing_item:
            self._flush()
        self.item = self.item and not closing_item
        self.styles.pop()
        element = self.open.pop()
        self.open_tags[element.tag] -= 1
        if self.chrome_at is not None and len(self.open) <= self.chrome_at:
            self.chrome_at = None
        return element.tag

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.meta.setdefault("title", data.strip())
        if not self.skip_depth:
            if data.strip():
                self.in_body = True  # text outside head elements starts the body
            if self.chrome_at is None:
                self.current.append(data)


def extract_html(html: str, *, page_only: bool = False,
                 drop_blocks: Collection[str] = ()) -> ExtractedHtml:
    """Visible text, one block per paragraph; headings become Markdown `#` lines.

    Text the page hides from readers is kept, in blocks of its own, and its spans in the
    extracted text are returned so that ingestion can flag the chunks that carry it.
    `page_only` (a web page) leaves out navigation chrome (`_chrome`), and a block whose text
    is one of `drop_blocks` (what the site repeats on most pages) is left out too."""
    parser = _Extractor(page_cascade(html), page_only)
    parser.feed(html)
    parser.close()
    parser._flush()
    parts: list[str] = []
    hidden: list[tuple[int, int]] = []
    offset = 0
    drop = frozenset(drop_blocks)
    blocks = [(block, h) for block, h in parser.blocks if block not in drop]
    for i, (block, is_hidden) in enumerate(blocks):
        if i:
            parts.append("\n\n")
            offset += 2
        if is_hidden:
            if hidden and hidden[-1][1] == offset - 2:
                hidden[-1] = (hidden[-1][0], offset + len(block))  # merge adjacent blocks
            else:
                hidden.append((offset, offset + len(block)))
        parts.append(block)
        offset += len(block)
    return ExtractedHtml(text="".join(parts) + "\n", meta=parser.meta,
                         hidden_spans=tuple(hidden), claims=tuple(parser.claims))
