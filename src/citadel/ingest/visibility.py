"""What a reader of an HTML page can see: the CSS that hides text, computed element by element.

Text a reader never sees has no business in an answer, and hidden text is the classic carrier
of instructions aimed at a model. `loaders.extract_html` asks `Cascade.enter` for each element
and keeps the text of hidden ones in blocks of their own, which ingestion flags.

The page's CSS is parsed with tinycss2 (escapes such as `n\\6f ne`, comments such as
`display:/**/none`, `!important` are the parser's business, not patterns'): the inline `style`
attribute, every `<style>` element of the page (wherever it stands, as in a browser), and a
few attributes that act as style (`hidden`, `aria-hidden="true"`, `bgcolor`, `<font color>`,
SVG presentation attributes, an `<svg>`'s `width`, `height` and `viewBox`). Declarations
cascade as in a browser: `!important` first, then inline over stylesheet, then specificity,
then order; `inherit` and custom properties (`--x`, read through `var()`) are followed.

Text is hidden when, for its element:
  * `display:none`, `content-visibility:hidden`, the `hidden` attribute or `aria-hidden`;
  * `visibility:hidden|collapse` (a descendant may set `visible` again);
  * the product of the ancestors' opacity (`opacity`, `filter:opacity()`, a colour's alpha)
    is below MIN_OPACITY;
  * the rendered font size (font size times every ancestor's `transform`/`scale`/`zoom`
    scale, or an SVG's viewBox scale) is below MIN_FONT_PX: `font-size:1px`, `scale(0)`;
  * a box of (almost) no height or width clips it (`height:0;overflow:hidden`, with no
    padding), or `clip:rect()` / `clip-path:inset()|circle()` leave no area;
  * it is pushed off-screen: absolute or fixed position with `left`, `top`, `right` or a
    margin at OFFSCREEN_PX or beyond, `text-indent` or `translate()` likewise;
  * its colour is (nearly) the colour behind it: within MAX_CHANNEL_GAP on every sRGB
    channel, after alpha blending, the backdrop being the nearest ancestor background
    (white at the root). A background image or `background-clip:text` makes the backdrop
    unknown, and unknown is never hidden.

Not supported (such text is treated as visible; docs/poison.md lists them): external
stylesheets (`<link>`, `@import`: never fetched), selectors with pseudo-classes other than
`:root`, sibling combinators (`+`, `~`) or attribute operators other than `=`/`~=`, `calc()`,
`@container`, and layout itself (an element covered by another, text outside a sized box
without `overflow:hidden`, scripts that hide or reveal). `@media` applies when it holds on a
1280x800 light-mode screen; `@supports` and `@layer` blocks always apply.

Bump VISIBILITY_VERSION when what counts as hidden changes: it is part of the screening
version in the snapshot fingerprint.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from types import MappingProxyType

import tinycss2
from tinycss2 import ast, color4

VISIBILITY_VERSION = "visibility-v1"

MIN_FONT_PX = 2.0  # text rendered smaller than this is not read by anyone
MIN_OPACITY = 0.1
MAX_CHANNEL_GAP = 0.05  # ~13/255 on each of R, G, B: white on #f3f3f3 is still hidden
OFFSCREEN_PX = -1000.0  # -9999px and -100vw are off-screen; a -300px slide-out is not
ROOT_FONT_PX = 16.0
VIEWPORT = (1280.0, 800.0)  # for vw/vh units and @media width/height features

RGB = tuple[float, float, float]


@dataclass(frozen=True)
class Paint:
    """A colour in sRGB (0-1 per channel) with its alpha."""

    rgb: RGB
    alpha: float = 1.0

    def over(self, backdrop: RGB) -> RGB:
        a = self.alpha
        return tuple(a * c + (1 - a) * b for c, b in zip(self.rgb, backdrop, strict=True))  # type: ignore[return-value]


BLACK: RGB = (0.0, 0.0, 0.0)
WHITE: RGB = (1.0, 1.0, 1.0)
_NO_CUSTOM: Mapping[str, tuple[ast.Node, ...]] = MappingProxyType({})


@dataclass(frozen=True)
class Style:
    """What an element passes to its text and descendants, as far as seeing them goes.

    Every field is already what descendants inherit (opacity and scale are products over the
    ancestors), so an element that sets nothing shares its parent's Style."""

    gone: str | None = None  # why nothing inside can be seen (display:none, off-screen, ...)
    invisible: bool = False  # visibility:hidden, which a descendant may undo
    opacity: float = 1.0
    scale: float = 1.0
    font_px: float = ROOT_FONT_PX
    color: Paint | None = Paint(BLACK)  # None: painted by something else (background-clip)
    backdrop: RGB | None = WHITE  # None: an image, or nothing known
    custom: Mapping[str, tuple[ast.Node, ...]] = field(default_factory=lambda: _NO_CUSTOM,
                                                       compare=False)
    in_svg: bool = False

    @cached_property
    def hidden(self) -> str | None:
        """Why text with this style cannot be seen, or None."""
        if self.gone:
            return self.gone
        if self.invisible:
            return "visibility:hidden"
        alpha = self.opacity * (self.color.alpha if self.color else 1.0)
        if alpha < MIN_OPACITY:
            return "transparent"
        if self.font_px * self.scale < MIN_FONT_PX:
            return "too small to read"
        if self.color is not None and self.backdrop is not None:
            text = self.color.over(self.backdrop)
            if max(abs(t - b) for t, b in zip(text, self.backdrop, strict=True)) <= MAX_CHANNEL_GAP:
                return "text the colour of its background"
        return None


ROOT = Style()


@dataclass(frozen=True)
class Element:
    tag: str
    attrs: Mapping[str, str | None]
    id: str | None = None
    classes: frozenset[str] = frozenset()

    @classmethod
    def of(cls, tag: str, attrs: Mapping[str, str | None]) -> Element:
        if not attrs:
            return _plain(tag)  # shared: a page of deeply nested bare tags stays small
        return cls(tag, attrs, attrs.get("id"), frozenset((attrs.get("class") or "").split()))


@lru_cache(maxsize=256)
def _plain(tag: str) -> Element:
    return Element(tag, MappingProxyType({}))


# --- declarations ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Declaration:
    name: str
    value: tuple[ast.Node, ...]  # without whitespace and comments
    important: bool = False


# Only these properties (and custom ones, which may feed them through var()) are kept: a
# stylesheet's other thousands of declarations never reach the cascade.
_RELEVANT = frozenset({
    "display", "visibility", "content-visibility", "opacity", "filter", "font-size", "font",
    "transform", "scale", "zoom", "height", "max-height", "width", "max-width", "overflow",
    "overflow-x", "overflow-y", "padding", "padding-top", "padding-bottom", "padding-left",
    "padding-right", "clip", "clip-path", "position", "left", "top", "right", "inset",
    "margin", "margin-left", "margin-top", "text-indent", "translate", "color",
    "-webkit-text-fill-color", "background", "background-color", "background-image",
    "background-clip", "-webkit-background-clip", "fill", "fill-opacity",
})


def _values(tokens: Iterable[ast.Node]) -> tuple[ast.Node, ...]:
    return tuple(t for t in tokens if t.type not in ("whitespace", "comment"))


def _declarations(nodes: Iterable[ast.Node]) -> tuple[Declaration, ...]:
    return tuple(
        Declaration(n.lower_name, _values(n.value), n.important)
        for n in nodes
        if n.type == "declaration" and (n.lower_name in _RELEVANT or n.name.startswith("--"))
    )


@lru_cache(maxsize=4096)
def inline_declarations(style: str) -> tuple[Declaration, ...]:
    """The relevant declarations of a `style` attribute (pages repeat the same few)."""
    return _declarations(tinycss2.parse_blocks_contents(style, skip_comments=True,
                                                        skip_whitespace=True))


# --- selectors -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Compound:
    tag: str | None = None
    id: str | None = None
    classes: frozenset[str] = frozenset()
    attrs: tuple[tuple[str, str, str | None], ...] = ()  # (name, "", None) | ("=" | "~=")
    root: bool = False

    def matches(self, e: Element) -> bool:
        if self.tag is not None and self.tag != e.tag:
            return False
        if self.root and e.tag != "html":
            return False
        if self.id is not None and self.id != e.id:
            return False
        if not self.classes <= e.classes:
            return False
        for name, op, value in self.attrs:
            if name not in e.attrs:
                return False
            actual = e.attrs[name] or ""
            if (op == "=" and actual != value) or (op == "~=" and value not in actual.split()):
                return False
        return True

    @property
    def specificity(self) -> tuple[int, int, int]:
        return (int(self.id is not None),
                len(self.classes) + len(self.attrs) + int(self.root),
                int(self.tag is not None))


@dataclass(frozen=True)
class Selector:
    # Compounds from the subject (rightmost) outwards, each with the combinator that links it
    # to the next one out: " " (descendant) or ">" (child); "" for the outermost.
    parts: tuple[tuple[Compound, str], ...]
    specificity: tuple[int, int, int]

    def matches(self, e: Element, ancestors: Sequence[Element]) -> bool:
        """Whether the selector matches `e`, whose ancestors are `ancestors` (outermost
        first)."""
        return self.parts[0][0].matches(e) and self._outward(1, len(ancestors) - 1, ancestors)

    def _outward(self, i: int, pos: int, ancestors: Sequence[Element]) -> bool:
        if i == len(self.parts):
            return True
        compound, combinator = self.parts[i][0], self.parts[i - 1][1]
        if combinator == ">":
            return pos >= 0 and compound.matches(ancestors[pos]) and self._outward(
                i + 1, pos - 1, ancestors)
        return any(compound.matches(ancestors[p]) and self._outward(i + 1, p - 1, ancestors)
                   for p in range(pos, -1, -1))


class Unsupported(Exception):
    """A selector this module does not evaluate: its rule is left out (docstring)."""


def parse_selectors(prelude: Sequence[ast.Node]) -> list[Selector]:
    """The supported selectors of a rule's comma-separated prelude."""
    selectors, current = [], []
    for token in [*prelude, None]:
        if token is None or (token.type == "literal" and token.value == ","):
            with contextlib.suppress(Unsupported):  # a rule for the other selectors stands
                selectors.append(_selector(current))
            current = []
        elif token.type != "comment":
            current.append(token)
    return selectors


def _selector(tokens: list[ast.Node]) -> Selector:
    compounds: list[tuple[str, Compound]] = []  # left to right, each with the combinator
    parts: dict[str, object] = {}              # that links it to the one before
    link = ""

    def finish() -> None:
        nonlocal parts, link
        compounds.append((link, _compound(parts)))
        parts, link = {}, ""

    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t.type == "whitespace":
            if parts:
                finish()
                link = " "
        elif t.type == "literal" and t.value == ">":
            if parts:
                finish()
            if not compounds:
                raise Unsupported
            link = ">"
        elif t.type == "ident" and not parts:
            parts["tag"] = t.lower_value
        elif t.type == "literal" and t.value == "*" and not parts:
            parts["any"] = True
        elif t.type == "hash" and t.is_identifier:
            parts["id"] = t.value
        elif (t.type == "literal" and t.value == "." and i + 1 < len(tokens)
              and tokens[i + 1].type == "ident"):
            parts.setdefault("classes", set()).add(tokens[i + 1].value)  # type: ignore[union-attr]
            i += 1
        elif t.type == "[] block":
            parts.setdefault("attrs", []).append(_attribute(t.content))  # type: ignore[union-attr]
        elif (t.type == "literal" and t.value == ":" and i + 1 < len(tokens)
              and tokens[i + 1].type == "ident" and tokens[i + 1].lower_value == "root"):
            parts["root"] = True
            i += 1
        else:
            raise Unsupported  # other pseudo-classes, pseudo-elements, + ~ |, functions
        i += 1
    if parts:
        finish()
    if not compounds or link == ">":
        raise Unsupported
    outward = tuple((compound, link) for link, compound in reversed(compounds))
    specificity = tuple(sum(c.specificity[k] for c, _ in outward) for k in range(3))
    return Selector(outward, specificity)  # type: ignore[arg-type]


def _compound(parts: Mapping[str, object]) -> Compound:
    return Compound(tag=parts.get("tag"), id=parts.get("id"),  # type: ignore[arg-type]
                    classes=frozenset(parts.get("classes", ())),  # type: ignore[arg-type]
                    attrs=tuple(parts.get("attrs", ())),  # type: ignore[arg-type]
                    root=bool(parts.get("root")))


def _attribute(content: Sequence[ast.Node]) -> tuple[str, str, str | None]:
    tokens = _values(content)
    if len(tokens) == 1 and tokens[0].type == "ident":
        return (tokens[0].lower_value, "", None)
    if (len(tokens) == 3 and tokens[0].type == "ident" and tokens[1].type == "literal"
            and tokens[1].value in ("=", "~=") and tokens[2].type in ("ident", "string")):
        return (tokens[0].lower_value, tokens[1].value, tokens[2].value)
    raise Unsupported


# --- stylesheets -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Rule:
    selector: Selector
    declarations: tuple[Declaration, ...]
    order: int


@dataclass
class Stylesheet:
    """A page's rules, indexed by what their subject compound requires, so that an element
    only tries the rules that could match it."""

    by_id: dict[str, list[Rule]] = field(default_factory=dict)
    by_class: dict[str, list[Rule]] = field(default_factory=dict)
    by_tag: dict[str, list[Rule]] = field(default_factory=dict)
    universal: list[Rule] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.by_id or self.by_class or self.by_tag or self.universal)

    def add(self, rule: Rule) -> None:
        subject = rule.selector.parts[0][0]
        if subject.id is not None:
            self.by_id.setdefault(subject.id, []).append(rule)
        elif subject.classes:
            self.by_class.setdefault(min(subject.classes), []).append(rule)
        elif subject.tag is not None:
            self.by_tag.setdefault(subject.tag, []).append(rule)
        elif subject.root:
            self.by_tag.setdefault("html", []).append(rule)
        else:
            self.universal.append(rule)

    def candidates(self, e: Element) -> Iterable[Rule]:
        yield from self.universal
        yield from self.by_tag.get(e.tag, ())
        if e.id is not None:
            yield from self.by_id.get(e.id, ())
        for c in e.classes:
            yield from self.by_class.get(c, ())


def stylesheet(css_texts: Iterable[str]) -> Stylesheet:
    """The rules of a page's `<style>` texts, in document order."""
    sheet = Stylesheet()
    order = 0
    for css in css_texts:
        for rule in _rules(tinycss2.parse_stylesheet(css, skip_comments=True,
                                                      skip_whitespace=True)):
            declarations = _declarations(tinycss2.parse_blocks_contents(
                rule.content, skip_comments=True, skip_whitespace=True))
            if not declarations:
                continue
            for selector in parse_selectors(rule.prelude):
                order += 1
                sheet.add(Rule(selector, declarations, order))
    return sheet


def _rules(nodes: Iterable[ast.Node]) -> Iterable[ast.QualifiedRule]:
    for node in nodes:
        if node.type == "qualified-rule":
            yield node
        elif node.type == "at-rule" and node.content is not None and _applies(node):
            yield from _rules(tinycss2.parse_rule_list(node.content, skip_comments=True,
                                                       skip_whitespace=True))


def _applies(rule: ast.AtRule) -> bool:
    keyword = rule.lower_at_keyword
    if keyword in ("supports", "layer"):
        first = _values(rule.prelude)
        return not (first and first[0].type == "ident" and first[0].lower_value == "not")
    if keyword == "media":
        return media_applies(rule.prelude)
    return False  # @container, @font-face, @keyframes, @page, ...


def media_applies(prelude: Sequence[ast.Node]) -> bool:
    """Whether a media query list holds on a 1280x800 light-mode screen (unknown features
    do not)."""
    queries: list[list[ast.Node]] = [[]]
    for t in prelude:
        if t.type == "literal" and t.value == ",":
            queries.append([])
        elif t.type not in ("whitespace", "comment"):
            queries[-1].append(t)
    return any(_query_holds(q) for q in queries if q)


def _query_holds(tokens: list[ast.Node]) -> bool:
    negate = bool(tokens) and tokens[0].type == "ident" and tokens[0].lower_value == "not"
    holds = True
    for t in tokens[1:] if negate else tokens:
        if t.type == "ident":
            word = t.lower_value
            if word in ("only", "and", "screen", "all"):
                continue
            holds = False  # print, speech, or/not inside, unknown words
        elif t.type == "() block":
            holds = holds and _feature_holds(_values(t.content))
        else:
            holds = False
    return holds != negate


_FEATURES = {"prefers-color-scheme": "light", "orientation": "landscape", "hover": "hover",
             "pointer": "fine", "any-hover": "hover", "any-pointer": "fine",
             "prefers-reduced-motion": "no-preference", "scripting": "enabled"}


def _feature_holds(tokens: tuple[ast.Node, ...]) -> bool:
    if len(tokens) == 3 and tokens[0].type == "ident" and tokens[1] == ":":
        name, value = tokens[0].lower_value, tokens[2]
        if name in _FEATURES:
            return value.type == "ident" and value.lower_value == _FEATURES[name]
        for prefix, cmp in (("min-", 1), ("max-", -1)):
            if name.startswith(prefix) and name[len(prefix):] in ("width", "height"):
                actual = VIEWPORT[0] if name.endswith("width") else VIEWPORT[1]
                px = length_px(value, ROOT_FONT_PX)
                return px is not None and (actual - px) * cmp >= 0
    return False


# --- the cascade -----------------------------------------------------------------------------

# Attributes that act as style. Only elements with one of these (or a stylesheet that could
# match them) are looked at: a plain element shares its parent's Style.
_STYLE_ATTRS = ("style", "hidden", "aria-hidden", "bgcolor", "color")
_SVG_PRESENTATION = ("display", "visibility", "opacity", "font-size", "fill", "fill-opacity",
                     "transform", "width", "height", "viewbox")


class Cascade:
    """A page's stylesheet applied element by element, outermost first."""

    def __init__(self, sheet: Stylesheet | None = None) -> None:
        self.sheet = sheet or Stylesheet()

    def enter(self, parent: Style, element: Element, ancestors: Sequence[Element]) -> Style:
        """The Style of `element`, a child of the element whose Style is `parent`;
        `ancestors` are its ancestors, outermost first."""
        in_svg = parent.in_svg or element.tag == "svg"
        if not (self.sheet or in_svg or any(a in element.attrs for a in _STYLE_ATTRS)):
            return parent
        declarations = self._cascade(element, ancestors, in_svg)
        if not declarations and in_svg == parent.in_svg and element.tag != "svg":
            return parent
        return _compute(parent, element, declarations, in_svg)

    def _cascade(self, e: Element, ancestors: Sequence[Element], in_svg: bool
                 ) -> dict[str, tuple[ast.Node, ...]]:
        """The winning value of each property set on `e` (shorthands expanded)."""
        ranked: list[tuple[tuple[object, ...], Declaration]] = []
        for d in _presentational(e, in_svg):
            ranked.append(((False, 0, (0, 0, 0), 0), d))
        if self.sheet:
            for rule in self.sheet.candidates(e):  # each rule is indexed once
                if not rule.selector.matches(e, ancestors):
                    continue
                for d in rule.declarations:
                    ranked.append(((d.important, 1, rule.selector.specificity, rule.order), d))
        style = e.attrs.get("style")
        if style:
            for order, d in enumerate(inline_declarations(style)):
                ranked.append(((d.important, 2, (0, 0, 0), order), d))
        ranked.sort(key=lambda pair: pair[0])
        winners: dict[str, tuple[ast.Node, ...]] = {}
        for _, d in ranked:  # later (higher-ranked) declarations overwrite earlier ones
            for name, value in _longhands(d.name, d.value):
                winners[name] = value
        return winners


def _presentational(e: Element, in_svg: bool) -> Iterable[Declaration]:
    """Attributes that act as (lowest-priority) style."""
    a = e.attrs
    if "hidden" in a:
        yield Declaration("display", (ast.IdentToken(0, 0, "none"),))
    if (a.get("aria-hidden") or "").strip().lower() == "true":
        yield Declaration("-aria-hidden", ())
    if a.get("bgcolor"):
        yield Declaration("background-color", _parse_value(a["bgcolor"]))
    if e.tag == "font" and a.get("color"):
        yield Declaration("color", _parse_value(a["color"]))
    if in_svg:
        for name in _SVG_PRESENTATION:
            value = a.get(name)
            if value is not None and (name not in ("width", "height", "viewbox")
                                      or e.tag == "svg"):
                tokens = _parse_value(value)
                if name == "font-size" and tokens and tokens[0].type == "number":
                    tokens = (_px(tokens[0].value),)  # SVG's user units are pixels
                yield Declaration("-svg-" + name if name in ("width", "height", "viewbox")
                                  else name, tokens)


def _px(value: float) -> ast.DimensionToken:
    return ast.DimensionToken(0, 0, value, None, str(value), "px")


@lru_cache(maxsize=1024)
def _parse_value(value: str) -> tuple[ast.Node, ...]:
    return _values(tinycss2.parse_component_value_list(value, skip_comments=True))


def _longhands(name: str, value: tuple[ast.Node, ...]
               ) -> Iterable[tuple[str, tuple[ast.Node, ...]]]:
    if name == "overflow":
        yield from (("overflow-x", value[:1]), ("overflow-y", value[-1:]))
    elif name in ("padding", "margin", "inset"):
        # top right bottom left, CSS's 1-4 value shorthand
        v = list(value) + [None] * 4
        top, right = v[0], v[1] or v[0]
        bottom, left = v[2] or v[0], v[3] or v[1] or v[0]
        prefix = "" if name == "inset" else name + "-"
        for side, part in (("top", top), ("right", right), ("bottom", bottom), ("left", left)):
            yield prefix + side, (part,) if part is not None else ()
    elif name == "background":
        images = tuple(t for t in value if _is_image(t))
        colours = tuple(t for t in value if _paint(t) is not None)
        yield "background-image", images
        yield "background-color", colours[-1:] or (ast.IdentToken(0, 0, "transparent"),)
    elif name == "font":
        size = _font_shorthand_size(value)
        if size is not None:
            yield "font-size", (size,)
    elif name == "-webkit-background-clip":
        yield "background-clip", value
    elif name == "-webkit-text-fill-color":
        yield "-text-fill", value
    else:
        yield name, value


def _is_image(t: ast.Node) -> bool:
    return t.type == "url" or (t.type == "function" and (
        t.lower_name in ("url", "image", "image-set", "cross-fade", "element")
        or t.lower_name.endswith("gradient")))


def _font_shorthand_size(value: tuple[ast.Node, ...]) -> ast.Node | None:
    for t in value:
        if t.type in ("dimension", "percentage") or (t.type == "number" and t.value == 0):
            return t
        if t.type == "ident" and t.lower_value in _FONT_KEYWORDS:
            return t
    return None


# --- computing a Style -----------------------------------------------------------------------

_FONT_KEYWORDS = {"xx-small": 9.0, "x-small": 10.0, "small": 13.0, "medium": 16.0,
                  "large": 18.0, "x-large": 24.0, "xx-large": 32.0, "xxx-large": 48.0}
_UNITS = {"px": 1.0, "pt": 4 / 3, "pc": 16.0, "in": 96.0, "cm": 96 / 2.54, "mm": 96 / 25.4,
          "q": 96 / 101.6, "vw": VIEWPORT[0] / 100, "vh": VIEWPORT[1] / 100,
          "vmin": min(VIEWPORT) / 100, "vmax": max(VIEWPORT) / 100}
_CLIPS = ("hidden", "clip", "scroll", "auto")


def length_px(t: ast.Node | None, font_px: float, percent_of: float | None = None,
              unitless_px: bool = False) -> float | None:
    """A length in CSS pixels, or None when it cannot be known here (a percentage of an
    unknown size, calc())."""
    if t is None:
        return None
    if t.type == "number":
        return float(t.value) if (t.value == 0 or unitless_px) else None
    if t.type == "percentage":
        if percent_of is not None:
            return percent_of * t.value / 100
        return 0.0 if t.value == 0 else None
    if t.type == "dimension":
        unit = t.lower_unit
        if unit in ("em",):
            return t.value * font_px
        if unit == "rem":
            return t.value * ROOT_FONT_PX
        if unit in ("ex", "ch"):
            return t.value * font_px / 2
        if unit in _UNITS:
            return t.value * _UNITS[unit]
    return None


class _Props:
    """An element's winning declarations, read with var() resolved."""

    def __init__(self, props: Mapping[str, tuple[ast.Node, ...]],
                 custom: Mapping[str, tuple[ast.Node, ...]]) -> None:
        self.props, self.custom = props, custom

    def __contains__(self, name: str) -> bool:
        return name in self.props

    def value(self, name: str) -> tuple[ast.Node, ...]:
        return _substitute(self.props.get(name, ()), self.custom)

    def first(self, name: str) -> ast.Node | None:
        v = self.value(name)
        return v[0] if v else None

    def ident(self, name: str) -> str | None:
        t = self.first(name)
        return t.lower_value if t is not None and t.type == "ident" else None


def _compute(parent: Style, e: Element, props: Mapping[str, tuple[ast.Node, ...]],
             in_svg: bool) -> Style:
    custom = parent.custom
    own_custom = {k: v for k, v in props.items() if k.startswith("--")}
    if own_custom:
        custom = MappingProxyType({**custom, **own_custom})
    p = _Props(props, custom)

    font_px = _font_size(p.first("font-size"), parent.font_px)
    gone = parent.gone or _gone(e, p, font_px)
    visibility = p.ident("visibility")
    invisible = (visibility != "visible" if visibility in ("hidden", "collapse", "visible")
                 else parent.invisible)
    opacity = (parent.opacity * _fraction(p.first("opacity"), 1.0)
               * _filter_opacity(p.value("filter")))
    scale = (parent.scale * _scale(p.value("transform")) * _scale_property(p.value("scale"))
             * _zoom(p.first("zoom"))
             * _viewbox_scale(p.value("-svg-width"), p.value("-svg-height"),
                              p.value("-svg-viewbox")))

    # SVG text is painted with `fill` (black unless set), HTML text with `color`.
    color = Paint(BLACK) if e.tag == "svg" and not parent.in_svg else parent.color
    paint_property = "fill" if in_svg else "color"
    if paint_property in p:
        color = _colour(p.value(paint_property), color, parent.color)
    if "-text-fill" in p:
        color = _colour(p.value("-text-fill"), color, color)
    if in_svg and "fill-opacity" in p and color is not None:
        color = Paint(color.rgb, color.alpha * _fraction(p.first("fill-opacity"), 1.0))

    backdrop = parent.backdrop
    if p.value("background-image") and p.ident("background-image") != "none":
        backdrop = None  # an image: its colours are unknown
    elif "background-color" in p:
        paint = _colour(p.value("background-color"), Paint(BLACK, 0.0), color)
        if paint is None:
            backdrop = None
        elif paint.alpha > 0:
            backdrop = (paint.rgb if paint.alpha >= 1 else
                        paint.over(backdrop) if backdrop is not None else None)
    if p.ident("background-clip") == "text":
        color = None  # the text shows the background through: nothing to compare

    return Style(gone=gone, invisible=invisible, opacity=opacity, scale=scale,
                 font_px=font_px, color=color, backdrop=backdrop, custom=custom,
                 in_svg=in_svg)


def _gone(e: Element, p: _Props, font_px: float) -> str | None:
    """Why an element takes its whole content out of sight, or None."""
    if p.ident("display") == "none":
        return "display:none"
    if "-aria-hidden" in p:
        return "aria-hidden"
    if p.ident("content-visibility") == "hidden":
        return "content-visibility:hidden"
    # A box of (almost) no height or width that clips what overflows it, and has no padding
    # to show it in (`height:0;padding-bottom:56%` is the aspect-ratio idiom for videos).
    # An <svg> inside a page always clips.
    for sizes, overflow, paddings in (
            (("height", "max-height", "-svg-height"), "overflow-y",
             ("padding-top", "padding-bottom")),
            (("width", "max-width", "-svg-width"), "overflow-x",
             ("padding-left", "padding-right"))):
        if not (p.ident(overflow) in _CLIPS or e.tag == "svg"):
            continue
        lengths = [length_px(p.first(n), font_px, unitless_px=n.startswith("-svg"))
                   for n in sizes]
        padding = [length_px(p.first(n), font_px) if n in p else 0.0 for n in paddings]
        if (any(x is not None and x < MIN_FONT_PX for x in lengths)
                and all(x is not None and x < MIN_FONT_PX for x in padding)):
            return "a box of no size"
    if _clip_empty(p.value("clip"), font_px) or _clip_path_empty(p.value("clip-path")):
        return "clipped away"
    if p.ident("position") in ("absolute", "fixed"):
        for side in ("left", "top", "right", "margin-left", "margin-top"):
            px = length_px(p.first(side), font_px)
            if px is not None and px <= OFFSCREEN_PX:
                return "off-screen"
    indent = length_px(p.first("text-indent"), font_px)
    if ((indent is not None and indent <= OFFSCREEN_PX) or _translate_px(p.value("transform"))
            or _translate_px(p.value("translate"), bare=True)):
        return "off-screen"
    return None


def _substitute(tokens: tuple[ast.Node, ...], custom: Mapping[str, tuple[ast.Node, ...]],
                depth: int = 0) -> tuple[ast.Node, ...]:
    """`tokens` with each var(--x[, fallback]) replaced by the custom property's value."""
    if depth > 8 or not any(t.type == "function" and t.lower_name == "var" for t in tokens):
        return tokens
    out: list[ast.Node] = []
    for t in tokens:
        if t.type == "function" and t.lower_name == "var":
            args = _values(t.arguments)
            name = args[0].value if args and args[0].type == "ident" else ""
            fallback = tuple(a for a in args[2:]) if len(args) > 2 else ()
            out.extend(_substitute(custom.get(name, fallback), custom, depth + 1))
        else:
            out.append(t)
    return tuple(out)


def _font_size(t: ast.Node | None, parent_px: float) -> float:
    if t is None:
        return parent_px
    if t.type == "ident":
        word = t.lower_value
        if word in _FONT_KEYWORDS:
            return _FONT_KEYWORDS[word]
        return {"smaller": parent_px / 1.2, "larger": parent_px * 1.2}.get(word, parent_px)
    px = length_px(t, parent_px, percent_of=parent_px)  # em and % of the parent's size
    return max(px, 0.0) if px is not None else parent_px


def _number(t: ast.Node | None) -> float | None:
    if t is None:
        return None
    if t.type == "number":
        return float(t.value)
    if t.type == "percentage":
        return t.value / 100
    return None


def _fraction(t: ast.Node | None, default: float) -> float:
    n = _number(t)
    return default if n is None else min(max(n, 0.0), 1.0)


def _filter_opacity(tokens: tuple[ast.Node, ...]) -> float:
    product = 1.0
    for t in tokens:
        if t.type == "function" and t.lower_name == "opacity":
            args = _values(t.arguments)
            product *= _fraction(args[0] if args else None, 1.0)
    return product


def _args(t: ast.Node) -> list[float | None]:
    return [_number(a) for a in _values(t.arguments) if not (a.type == "literal"
                                                             and a.value == ",")]


def _scale(tokens: tuple[ast.Node, ...]) -> float:
    """How much a `transform` shrinks its element's content (the smaller of x and y)."""
    factor = 1.0
    for t in tokens:
        if t.type != "function":
            continue
        name, args = t.lower_name, _args(t)
        known = [abs(a) for a in args if a is not None]
        if name in ("scale", "scale3d") and known:
            factor *= min(known[:2])
        elif name in ("scalex", "scaley") and known:
            factor *= known[0]
        elif name == "matrix" and len(args) == 6 and all(a is not None for a in args):
            a, b, c, d = args[:4]
            factor *= min(math.hypot(a, b), math.hypot(c, d))  # type: ignore[arg-type]
    return factor


def _scale_property(tokens: tuple[ast.Node, ...]) -> float:
    known = [abs(n) for n in map(_number, tokens) if n is not None]
    return min(known[:2]) if known else 1.0


def _zoom(t: ast.Node | None) -> float:
    n = _number(t)
    return n if n is not None and n > 0 else 1.0  # zoom:0 means 1


def _viewbox_scale(width: tuple[ast.Node, ...], height: tuple[ast.Node, ...],
                   viewbox: tuple[ast.Node, ...]) -> float:
    box = [_number(t) for t in viewbox if not (t.type == "literal" and t.value == ",")]
    w = length_px(width[0], ROOT_FONT_PX, unitless_px=True) if width else None
    h = length_px(height[0], ROOT_FONT_PX, unitless_px=True) if height else None
    if len(box) != 4 or any(b is None for b in box) or w is None or h is None:
        return 1.0
    _, _, bw, bh = box
    if not bw or not bh or bw <= 0 or bh <= 0:
        return 1.0
    return min(w / bw, h / bh)


def _translate_px(tokens: tuple[ast.Node, ...], bare: bool = False) -> bool:
    """Whether a transform's translate() (or the `translate` property) moves the element
    off-screen to the left or top."""
    lengths: list[ast.Node] = []
    if bare:
        lengths = list(tokens)
    for t in tokens:
        if t.type == "function" and t.lower_name in ("translate", "translatex",
                                                     "translatey", "translate3d"):
            lengths.extend(a for a in _values(t.arguments)
                           if not (a.type == "literal" and a.value == ","))
    return any((px := length_px(a, ROOT_FONT_PX)) is not None and px <= OFFSCREEN_PX
               for a in lengths)


def _clip_empty(tokens: tuple[ast.Node, ...], font_px: float) -> bool:
    """clip: rect(top, right, bottom, left) with no area."""
    for t in tokens:
        if t.type == "function" and t.lower_name == "rect":
            edges = [a for a in _values(t.arguments)
                     if not (a.type == "literal" and a.value == ",")]
            if len(edges) != 4:
                return False
            top, right, bottom, left = (length_px(a, font_px) for a in edges)
            return ((top is not None and bottom is not None and bottom - top < MIN_FONT_PX)
                    or (left is not None and right is not None and right - left < MIN_FONT_PX))
    return False


def _clip_path_empty(tokens: tuple[ast.Node, ...]) -> bool:
    """clip-path: inset() taking half from each side, or a circle/ellipse of no radius."""
    for t in tokens:
        if t.type != "function":
            continue
        args = [a for a in _values(t.arguments) if a.type in ("number", "percentage",
                                                              "dimension")]
        if t.lower_name == "inset" and args:
            v = [a.value if a.type == "percentage" else None for a in args[:4]] + [None] * 4
            top, right = v[0], v[1] if v[1] is not None else v[0]
            bottom = v[2] if v[2] is not None else v[0]
            left = v[3] if v[3] is not None else right
            if len(args) == 1:
                top = right = bottom = left = v[0]
            return ((top is not None and bottom is not None and top + bottom >= 100)
                    or (left is not None and right is not None and left + right >= 100))
        if t.lower_name in ("circle", "ellipse") and args:
            return all(a.value == 0 for a in args[: 1 if t.lower_name == "circle" else 2])
    return False


# --- colours ---------------------------------------------------------------------------------

def _paint(t: ast.Node) -> Paint | str | None:
    """A colour token as Paint, "currentcolor", or None when it is not a colour."""
    if t.type not in ("ident", "hash", "function"):
        return None
    try:
        c = color4.parse_color(t)
    except (ValueError, TypeError, IndexError):
        return None
    if c is None or isinstance(c, str):
        return c
    rgb = _srgb(c)
    return Paint(rgb, float(c.alpha)) if rgb is not None else None


def _colour(tokens: tuple[ast.Node, ...], inherited: Paint | None,
            current: Paint | None) -> Paint | None:
    """A `color`-like value: a Paint; `inherited` for inherit/unset; None when unknown."""
    if not tokens:
        return inherited
    t = tokens[0]
    if t.type == "ident" and t.lower_value in ("inherit", "unset"):
        return inherited
    if t.type == "ident" and t.lower_value == "initial":
        return Paint(BLACK)
    if t.type == "ident" and t.lower_value == "none":
        return Paint(BLACK, 0.0)  # fill:none
    paint = _paint(t)
    if paint == "currentcolor":
        return current
    return paint if isinstance(paint, Paint) else None


# CSS Color 4's matrices: XYZ (D65) to linear sRGB, and Bradford D50 -> D65.
_XYZ_TO_SRGB = ((3.2409699419045226, -1.537383177570094, -0.4986107602930034),
                (-0.9692436362808796, 1.8759675015077202, 0.04155505740717559),
                (0.05563007969699366, -0.20397695888897652, 1.0569715142428786))
_D50_TO_D65 = ((0.955473421488075, -0.02309845494876471, 0.06325924320057072),
               (-0.0283697093338637, 1.0099953980813041, 0.021041441191917323),
               (0.012314014864481998, -0.020507649298898964, 1.330365926242124))


def _mul(m: tuple[tuple[float, float, float], ...], v: Sequence[float]) -> list[float]:
    return [sum(a * b for a, b in zip(row, v, strict=True)) for row in m]


def _srgb(c: color4.Color) -> RGB | None:
    try:
        if c.space in ("srgb", "hsl", "hwb"):
            rgb = list(c.to("srgb").coordinates)
        else:
            if c.space in ("lab", "lch", "xyz-d50"):
                xyz = _mul(_D50_TO_D65, c.to("xyz-d50").coordinates)
            else:
                xyz = list(c.to("xyz-d65").coordinates)
            linear = _mul(_XYZ_TO_SRGB, xyz)
            rgb = [(1.055 * x ** (1 / 2.4) - 0.055) if x > 0.0031308 else 12.92 * x
                   for x in (max(v, 0.0) for v in linear)]
    except (NotImplementedError, ValueError, TypeError):
        return None
    return tuple(min(max(float(x), 0.0), 1.0) for x in rgb)  # type: ignore[return-value]


# --- the page's <style> elements -------------------------------------------------------------

_STYLE_OPEN = re.compile(r"<style(?=[\s/>])[^>]*>", re.I)


def style_texts(html: str) -> list[str]:
    """The text of every `<style>` element of a page, in order. A browser applies a
    `<style>` wherever it stands (even after the text it hides), so they are read before the
    page is."""
    lower = html.lower()
    texts = []
    pos = 0
    while (m := _STYLE_OPEN.search(html, pos)) is not None:
        end = lower.find("</style", m.end())
        texts.append(html[m.end(): end if end >= 0 else len(html)])
        if end < 0:
            break
        pos = end + 7
    return texts


def page_cascade(html: str) -> Cascade:
    return Cascade(stylesheet(style_texts(html)))


