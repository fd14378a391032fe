"""Text is hidden when the page's CSS keeps it from a reader, computed as a browser would."""

import pytest

from citadel.ingest.loaders import extract_html
from citadel.ingest.visibility import ROOT, Element, page_cascade, style_texts


def hidden(inline: str = "", *, sheet: str = "", tag: str = "p", attrs: dict | None = None,
           parents: tuple[tuple[str, dict], ...] = ()) -> str | None:
    """Why the text of an element (under `parents`, on a page with `sheet`) is hidden."""
    cascade = page_cascade(f"<style>{sheet}</style>")
    style, ancestors = ROOT, []
    for parent_tag, parent_attrs in parents:
        element = Element.of(parent_tag, parent_attrs)
        style = cascade.enter(style, element, ancestors)
        ancestors.append(element)
    own = dict(attrs or {}) | ({"style": inline} if inline else {})
    return cascade.enter(style, Element.of(tag, own), ancestors).hidden


@pytest.mark.parametrize("style", [
    "display:/**/none",
    r"display:n\6f ne",
    r"disp\6c ay: none !important",
    "visibility:hidden",
    "opacity:0.01",
    "opacity:5%",
    "filter:opacity(0)",
    "font-size:0.0001px",
    "font-size:1px",
    "font-size:0",
    "font:0/0 a",
    "transform:scale(0)",
    "transform:scaleY(0.01)",
    "transform:matrix(0,0,0,0,0,0)",
    "height:0;overflow:hidden",
    "max-height:0;overflow:hidden",
    "width:1px;height:1px;overflow:hidden;position:absolute",
    "clip:rect(0,0,0,0);position:absolute",
    "clip:rect(1px, 1px, 1px, 1px);position:absolute",
    "clip-path:inset(50%)",
    "clip-path:circle(0)",
    "position:absolute;left:-9999px",
    "position:fixed;top:-100vw",
    "text-indent:-9999px",
    "transform:translateX(-10000px)",
    "color:#fff",
    "color:#fefefe",
    "color:white;background:#fff",
    "color:rgb(255 255 255 / 50%)",
    "color:hsl(0 0% 100%)",
    "color:lab(100 0 0)",
    "color:transparent",
    "color:#222;background-color:#222",
    "--hide:none;display:var(--hide)",
    "display:var(--unset, none)",
    "content-visibility:hidden",
])
def test_inline_styles_that_hide_text(style):
    assert hidden(style)


@pytest.mark.parametrize("style", [
    "font-size:0.8em",
    "font-size:11px",
    "opacity:0.6",
    "color:#999",
    "color:#eee;background:#111",
    "color:white;background:black",
    "height:0;padding-bottom:56.25%;overflow:hidden",
    "height:0",
    "position:absolute;left:0",
    "position:fixed;left:-280px",
    "position:relative;left:-9999px",
    "transform:scale(0.8)",
    "background:url(hero.jpg);color:#fff",
    "background:linear-gradient(red, blue);background-clip:text;color:transparent",
    "display:block",
    "clip-path:inset(10%)",
])
def test_styles_a_reader_still_sees(style):
    assert hidden(style) is None


def test_stylesheet_rules_hide_by_class_id_element_and_descendant():
    assert hidden(sheet=".note{display:none}", attrs={"class": "x note"}) == "display:none"
    assert hidden(sheet="#promo{visibility:hidden}", attrs={"id": "promo"})
    assert hidden(sheet="aside{opacity:0}", tag="aside")
    assert hidden(sheet=".meta p{display:none}", parents=(("div", {"class": "meta"}),))
    assert hidden(sheet="div > p{display:none}", parents=(("div", {}),))
    assert hidden(sheet="[data-x=y]{display:none}", attrs={"data-x": "y"})
    assert hidden(sheet=":root{color:#fff}", parents=(("html", {}),))


def test_selectors_that_do_not_match_or_are_not_supported_leave_text_visible():
    assert hidden(sheet=".meta > p{display:none}",
                  parents=(("div", {"class": "meta"}), ("div", {}))) is None
    assert hidden(sheet=".note:hover{display:none}", attrs={"class": "note"}) is None
    assert hidden(sheet="h2 + p{display:none}") is None
    assert hidden(sheet=".other{display:none}", attrs={"class": "note"}) is None


def test_the_cascade_follows_importance_origin_specificity_and_order():
    assert hidden("display:block", sheet=".x{display:none}", attrs={"class": "x"}) is None
    assert hidden("display:block", sheet=".x{display:none !important}", attrs={"class": "x"})
    assert hidden(sheet="#i{display:block} .x{display:none}",
                  attrs={"class": "x", "id": "i"}) is None
    assert hidden(sheet=".x{display:none} .x{display:block}", attrs={"class": "x"}) is None


def test_media_queries_apply_on_a_desktop_light_mode_screen():
    assert hidden(sheet="@media screen{.x{display:none}}", attrs={"class": "x"})
    assert hidden(sheet="@media (min-width: 600px){.x{display:none}}", attrs={"class": "x"})
    assert hidden(sheet="@supports (display:grid){.x{display:none}}", attrs={"class": "x"})
    for query in ("print", "(max-width: 600px)", "(prefers-color-scheme: dark)",
                  "(unknown-feature)"):
        assert hidden(sheet=f"@media {query}{{.x{{display:none}}}}",
                      attrs={"class": "x"}) is None, query


def test_inheritance_a_descendant_may_undo_and_may_not():
    assert hidden("visibility:visible", parents=(("div", {"style": "visibility:hidden"}),)) \
        is None
    assert hidden("font-size:16px", parents=(("div", {"style": "font-size:0"}),)) is None
    assert hidden("font-size:1em", parents=(("div", {"style": "font-size:0.05px"}),))
    assert hidden("display:block", parents=(("div", {"style": "display:none"}),))
    assert hidden("opacity:1", parents=(("div", {"style": "opacity:0.3"}),
                                        ("div", {"style": "opacity:0.3"})))
    assert hidden("color:#fff", parents=(("div", {"style": "background:#fff"}),))
    assert hidden(parents=(("div", {"style": "background:#000;color:#fff"}),)) is None


def test_attributes_that_act_as_style():
    assert hidden(attrs={"hidden": None})
    assert hidden(attrs={"aria-hidden": "true"})
    assert hidden(tag="font", attrs={"color": "#ffffff"},
                  parents=(("td", {"bgcolor": "#ffffff"}),))
    assert hidden(tag="text", parents=(("svg", {"width": "0", "height": "0"}),))
    assert hidden(tag="text", parents=(("svg", {"width": "10", "height": "10",
                                                "viewbox": "0 0 10000 10000"}),))
    assert hidden(tag="text", attrs={"font-size": "0.5"}, parents=(("svg", {}),))
    assert hidden(tag="text", attrs={"fill": "#fff"}, parents=(("svg", {}),))
    assert hidden(tag="text", parents=(("svg", {"width": "200", "height": "40"}),)) is None


def test_style_elements_are_read_wherever_they_stand():
    html = "<p>a</p><STYLE type='text/css'>.x{}</STYLE><p>b</p><style>.y{}</style"
    assert style_texts(html) == [".x{}", ".y{}"]


def test_extracted_text_keeps_hidden_blocks_apart_with_a_late_stylesheet():
    extracted = extract_html(
        "<body><p>Shown.</p><p class='x'>Hidden by a rule below.</p>"
        "<p style='color:#fff'>White.</p><p>Shown again.</p>"
        "<style>.x { opacity: 0 }</style></body>")
    hidden_text = [extracted.text[a:b] for a, b in extracted.hidden_spans]
    assert hidden_text == ["Hidden by a rule below.\n\nWhite."]
    assert "Shown again." in extracted.text


def test_unclosed_paragraphs_do_not_pass_their_style_to_the_next():
    extracted = extract_html("<body><p style='display:none'>Hidden.<p>Shown.</body>")
    assert [extracted.text[a:b] for a, b in extracted.hidden_spans] == ["Hidden."]
