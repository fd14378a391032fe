"""The structure of a chunk's lines: what each line is, and what it must be read with.

Support pages are lists, tables, FAQs and headed sections more than prose. Read line by line,
"- Visa" says nothing, "| Friday | 8am to 3pm |" has lost its column names, and "We refer
patients to Cascade Oral Surgery" has lost the FAQ question it answers. Each line gets a
role and, where it has one, its *lead*: the line that gives it its sense.

* `heading`: a Markdown heading, or a short line in capitals ("2. SUPPORT HOURS"): context
  for the lines below it, never an answer;
* `question`: a line that asks ("**Do you place dental implants?**"): the lead of the
  answer below it (an FAQ), never an answer;
* `intro`: a line ending in a colon that introduces a list ("We accept:"): it says nothing
  by itself, so it never answers alone (its list, read whole, does);
* `item`: a list item; its lead is the line introducing the list;
* `header` / `row` / `rule`: a Markdown table's header row, body rows (their lead is the
  header) and separator;
* `text`: anything else; its lead is the FAQ question or capitalised heading above it.

`groups` finds each introduced list as a whole (the introduction and its items), which can
be the answer to "which …?" in one piece. `said` writes a line as an answer says it in
words ("Friday — Hours: 8am to 3pm"), while a citation still quotes the source's own text.
Pure functions over the chunk's text; offsets are into it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from citadel.text.sentences import display_text

Role = Literal["heading", "question", "intro", "item", "header", "row", "rule", "text"]

_ITEM = re.compile(r"^\s*(?:[-*+•]|\d{1,2}[.)])\s+(?=\S)")
_MARKUP = re.compile(r"\*\*|__|`")
_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
_NUMBERED_HEADING = re.compile(r"^\s*\d{1,2}[.)]?\s+")
_LINE = re.compile(r"[^\n]+")


@dataclass(frozen=True)
class Line:
    start: int
    end: int
    role: Role
    lead: tuple[int, int] | None = None  # the span of the line it is read with


@dataclass(frozen=True)
class Group:
    """An introduced list: the introduction's span and each item's span."""

    intro: tuple[int, int]
    items: tuple[tuple[int, int], ...]

    @property
    def start(self) -> int:
        return self.intro[0]

    @property
    def end(self) -> int:
        return self.items[-1][1]


def plain(text: str) -> str:
    """A line without list, emphasis and table markup, its spaces folded."""
    text = _ITEM.sub("", text, count=1).lstrip("# ")
    text = _MARKUP.sub("", text).replace("|", " ")
    return re.sub(r"\s+", " ", text).strip()


def cells(text: str) -> list[str]:
    return [plain(c) for c in text.strip().strip("|").split("|")]


def _is_heading(text: str) -> bool:
    stripped = text.strip()
    if stripped.startswith("#"):
        return True
    words = _NUMBERED_HEADING.sub("", plain(stripped))
    letters = [c for c in words if c.isalpha()]
    return (len(letters) >= 3 and all(c.isupper() for c in letters)
            and not words.endswith((".", ":", "?", "!")) and len(words.split()) <= 8)


def _role(text: str) -> Role:
    stripped = text.strip()
    if _RULE.match(stripped) and "-" in stripped:
        return "rule"
    if stripped.startswith("|") and stripped.endswith("|") and stripped.count("|") >= 3:
        return "row"
    if _is_heading(stripped):
        return "heading"
    if plain(stripped).endswith("?"):
        return "question"
    if _ITEM.match(stripped):
        return "item"
    return "text"


def lines(content: str) -> list[Line]:
    """Every non-blank line of `content` with its role and lead."""
    raw = [(m.start(), m.end(), m.group()) for m in _LINE.finditer(content) if m.group().strip()]
    roles = [_role(text) for _, _, text in raw]
    out: list[Line] = []
    header: tuple[int, int] | None = None
    intro: tuple[int, int] | None = None
    above: tuple[int, int] | None = None  # the FAQ question or heading the text sits under
    for k, ((start, end, text), role) in enumerate(zip(raw, roles, strict=True)):
        span = (start, end)
        if role == "row":
            after_rule = k + 1 < len(raw) and roles[k + 1] == "rule"
            if after_rule or (k == 0 or roles[k - 1] not in ("row", "rule")):
                header = span if after_rule else None
                role = "header" if after_rule else role
                out.append(Line(start, end, role))
                continue
            out.append(Line(start, end, role, header))
            continue
        if role == "rule":
            out.append(Line(start, end, role))
            continue
        header = None
        if role == "item":
            out.append(Line(start, end, role, intro))
            continue
        if role in ("heading", "question"):
            # A Markdown heading is the chunk's section already: it leads nothing itself.
            above = None if text.lstrip().startswith("#") else span
            intro = span if plain(text).endswith((":", "?")) else None
            out.append(Line(start, end, role))
            continue
        intro = span if _introduces(roles, k) else None
        if intro is not None and plain(text).endswith(":"):
            role = "intro"
        out.append(Line(start, end, role, above))
    return out


def _introduces(roles: list[Role], k: int) -> bool:
    """A text line directly followed by list items introduces them."""
    return k + 1 < len(roles) and roles[k + 1] == "item"


def groups(found: list[Line]) -> list[Group]:
    """Each list with its introduction (two items at least)."""
    out: list[Group] = []
    items: list[tuple[int, int]] = []
    intro: tuple[int, int] | None = None
    for line in [*found, Line(-1, -1, "text")]:
        if line.role == "item" and line.lead is not None and line.lead == intro:
            items.append((line.start, line.end))
            continue
        if intro is not None and len(items) >= 2:
            out.append(Group(intro, tuple(items)))
        items = [(line.start, line.end)] if line.role == "item" and line.lead else []
        intro = line.lead if line.role == "item" else None
    return out


def said(content: str, line: Line) -> str | None:
    """The line as an answer says it, when its structure needs words: a table row with its
    column names, a list item with its introduction. None: the line says itself."""
    text = content[line.start:line.end]
    if line.lead is None:
        return None
    lead = content[line.lead[0]:line.lead[1]]
    if line.role == "row":
        names, values = cells(lead), cells(text)
        if len(names) != len(values) or len(values) < 2:
            return None
        rest = "; ".join(f"{n}: {v}" for n, v in zip(names[1:], values[1:], strict=True) if v)
        return f"{values[0]} — {rest}" if rest else values[0]
    if line.role == "item":
        return f"{plain(lead).rstrip(':')}: {plain(text)}"
    return None


def said_group(content: str, group: Group) -> str:
    """An introduced list in one sentence: "We accept: Visa, Mastercard and PayPal"."""
    intro = plain(content[group.intro[0]:group.intro[1]]).rstrip(":")
    items = [plain(content[a:b]).rstrip(".;,") for a, b in group.items]
    listed = ", ".join(items[:-1]) + f" and {items[-1]}" if len(items) > 1 else items[0]
    return f"{intro}: {listed}."


def read_with(content: str, line: Line, span: tuple[int, int] | None = None) -> str:
    """What a reader reads for this line, or for one sentence of it (`span`): the line as an
    answer says it, else its lead then its words."""
    start, end = span or (line.start, line.end)
    text = content[start:end]
    if text.strip() == content[line.start:line.end].strip():
        spoken = said(content, line)
        if spoken is not None:
            return spoken
    if line.lead is None:
        return display_text(text)
    return f"{plain(content[line.lead[0]:line.lead[1]])} {display_text(text)}"


def answers_nothing(role: Role) -> bool:
    """Headings, questions, list introductions, table headers and rules are never an
    answer."""
    return role in ("heading", "question", "intro", "header", "rule")
