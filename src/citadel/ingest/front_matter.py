"""Markdown front matter: the `---` block at the top of a file, read by a small strict parser.

Read: `key: value` lines (a value may be quoted), inline lists (`tags: [a, "b c"]`), block
lists (`tags:` followed by `- item` lines), blank lines and `# comments`. No YAML library and
no guessing: a line that is none of these is an error naming the line, and so is a value in
another YAML form (nested mapping, multi-line string, anchor) under a key the loader reads;
under any other key it is left alone, like the key itself.

The loader (`loaders.read_document`) takes a document's title, category, date and tags from
here and starts the document's body after the block: the block stays in the document's text,
so offsets index the file, but it is never chunked, retrieved, quoted or shown. Front matter
describes a document; it never vouches for it: authority, supersedes and tenant come only from
the operator's `citadel-sources.toml` (`operator_metadata`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_BLOCK = re.compile(r"\A---[ \t]*\n(?:(.*?)\n)?---[ \t]*(?:\n|\Z)", re.S)
_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:(?:[ \t]+(.*?))?[ \t]*\Z")
_ITEM = re.compile(r"[ \t]*-(?:[ \t]+(.*?))?[ \t]*\Z")
_PLAIN_COMMENT = re.compile(r"[ \t]+#.*\Z")

Value = str | tuple[str, ...]


class FrontMatterError(ValueError):
    """Front matter the parser does not read; the message names the line and says why."""


@dataclass(frozen=True)
class FrontMatter:
    """The keys of a front matter block (lower case, in order) and where the body begins."""

    end: int = 0
    values: dict[str, Value] = field(default_factory=dict)
    # Keys whose value is in a YAML form this parser does not read, and why.
    unreadable: dict[str, str] = field(default_factory=dict)

    @property
    def keys(self) -> frozenset[str]:
        return frozenset(self.values) | frozenset(self.unreadable)

    def get(self, key: str) -> Value | None:
        """The value of a key (None when absent); FrontMatterError when it is unreadable."""
        if key in self.unreadable:
            raise FrontMatterError(f"front matter {key!r}: {self.unreadable[key]}")
        return self.values.get(key)

    def text(self, key: str) -> str | None:
        """A single value: a list is an error."""
        value = self.get(key)
        if isinstance(value, tuple):
            raise FrontMatterError(f"front matter {key!r} must be one value, not a list")
        return value or None

    def items(self, key: str) -> tuple[str, ...]:
        """A list; a single value is split at commas ("a, b")."""
        value = self.get(key)
        if value is None:
            return ()
        parts = value if isinstance(value, tuple) else tuple(value.split(","))
        return tuple(dict.fromkeys(p.strip() for p in parts if p.strip()))


def read_front_matter(text: str) -> FrontMatter | None:
    """The front matter at the very start of `text`, or None when there is none."""
    m = _BLOCK.match(text)
    if m is None:
        return None
    entries: dict[str, tuple[int, str, list[tuple[int, str]]]] = {}
    current: str | None = None
    for n, line in enumerate((m.group(1) or "").split("\n"), start=2):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[0] in " \t-":
            if current is None:
                raise FrontMatterError(f"front matter line {n}: an indented line or list item "
                                       "before any key")
            entries[current][2].append((n, line))
            continue
        km = _KEY.match(line)
        if km is None:
            raise FrontMatterError(f"front matter line {n}: not `key: value`: {line[:60]!r}")
        key = km.group(1).lower()
        if key in entries:
            raise FrontMatterError(f"front matter line {n}: {key!r} is given twice")
        entries[key] = (n, km.group(2) or "", [])
        current = key
    values: dict[str, Value] = {}
    unreadable: dict[str, str] = {}
    for key, (n, inline, more) in entries.items():
        try:
            values[key] = _value(n, inline, more)
        except FrontMatterError as exc:
            unreadable[key] = str(exc)
    return FrontMatter(end=m.end(), values=values, unreadable=unreadable)


def _value(n: int, inline: str, more: list[tuple[int, str]]) -> Value:
    if inline[:1] in ("|", ">"):
        raise FrontMatterError(f"line {n}: multi-line strings are not read")
    if inline and more:
        raise FrontMatterError(f"line {more[0][0]}: nested values are not read (only "
                               "`key: value` and lists)")
    if more:
        items = []
        for m_n, line in more:
            item = _ITEM.match(line)
            if item is None:
                raise FrontMatterError(f"line {m_n}: nested values are not read (only "
                                       "`key: value` and lists)")
            value = item.group(1) or ""
            if re.search(r":(?:[ \t]|\Z)", value) and value[:1] not in ("'", '"'):
                raise FrontMatterError(f"line {m_n}: list items that are mappings are not read")
            items.append(_scalar(m_n, value))
        return tuple(items)
    if inline.startswith("["):
        if not inline.endswith("]"):
            raise FrontMatterError(f"line {n}: a list must close on its line: {inline[:60]!r}")
        body = inline[1:-1].strip()
        return tuple(_scalar(n, part.strip()) for part in _split_list(n, body)) if body else ()
    return _scalar(n, inline)


def _split_list(n: int, body: str) -> list[str]:
    """The items of an inline list, split at commas outside quotes."""
    parts, current, quote = [], [], ""
    for ch in body:
        if quote:
            current.append(ch)
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
            current.append(ch)
        elif ch == ",":
            parts.append("".join(current))
            current = []
        elif ch in "[]{}":
            raise FrontMatterError(f"line {n}: nested lists and mappings are not read")
        else:
            current.append(ch)
    if quote:
        raise FrontMatterError(f"line {n}: a quote is not closed")
    parts.append("".join(current))
    return parts


def _scalar(n: int, value: str) -> str:
    if value[:1] in ("'", '"'):
        q = value[0]
        if len(value) < 2 or not value.endswith(q):
            raise FrontMatterError(f"line {n}: a quote is not closed: {value[:60]!r}")
        inner = value[1:-1]
        return inner.replace("''", "'") if q == "'" else inner.replace('\\"', '"')
    if value[:1] in ("|", ">", "{", "&", "*", "!"):
        raise FrontMatterError(f"line {n}: values starting with {value[:1]!r} (multi-line "
                               "strings, mappings, anchors, YAML tags) are not read")
    return _PLAIN_COMMENT.sub("", value)
