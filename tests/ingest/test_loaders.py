import datetime as dt
import hashlib
from pathlib import Path

import pytest

from citadel.ingest.chunking import chunk_document
from citadel.ingest.loaders import document_id, extract_html, load_corpus, load_file
from tests.conftest import DEMO_KB
from tests.helpers_kb import write_kb


def test_demo_kb_loads_every_document_with_metadata():
    corpus = load_corpus([DEMO_KB])
    assert corpus.skipped == ()
    assert len(corpus.documents) >= 15
    by_id = {d.document_id: d for d in corpus.documents}
    policy = by_id["refunds-policy"]
    assert policy.title == "Refunds and Returns Policy"
    assert policy.category == "refunds"
    assert policy.authority == 1.0
    assert str(policy.effective_date) == "2026-03-01"
    assert policy.supersedes == "refunds-policy-2023"
    assert policy.source == "refunds-policy.md"
    assert by_id["gift-cards"].format == "html"
    assert by_id["contact-hours"].format == "text"


def test_demo_kb_markdown_text_is_the_file_and_its_body_starts_after_the_front_matter():
    by_id = {d.document_id: d for d in load_corpus([DEMO_KB]).documents}
    policy = by_id["refunds-policy"]
    file_text = (DEMO_KB / "refunds-policy.md").read_text("utf-8")
    assert policy.text == file_text
    assert policy.content_sha256 == hashlib.sha256(file_text.encode()).hexdigest()
    assert policy.body.startswith("# Refunds and Returns Policy\n")
    assert "effective_date" in policy.text[: policy.body_start]
    assert "effective_date" not in policy.body


FRONT_MATTER = """---
title: "Refunds: the short version"
date: 2026-04-01
tags: [returns, "refunds"]
authority: 1.0
supersedes: refunds-old
tenant: globex
---

# Refunds

Refunds take five days.
"""


def test_front_matter_sets_title_date_and_tags_and_never_authority_supersedes_or_tenant(
        tmp_path: Path):
    kb = write_kb(tmp_path / "kb", {"refunds.md": FRONT_MATTER, "faq.md": (
        "---\nauthority: 0.9\ncategory: help\ntags:\n  - faq\n  - help\n---\n# FAQ\n\nAsk.\n")},
        tenants={"refunds.md": "acme"})
    corpus = load_corpus([kb])
    assert corpus.skipped == ()
    by_source = {d.source: d for d in corpus.documents}
    refunds = by_source["refunds.md"]
    assert refunds.title == "Refunds: the short version"
    assert refunds.effective_date == dt.date(2026, 4, 1)
    assert refunds.tags == ("returns", "refunds")
    # The operator's file sets the tenant; the front matter's authority, supersedes and
    # tenant change nothing.
    assert (refunds.authority, refunds.supersedes, refunds.tenant) == (0.5, None, "acme")
    faq = by_source["faq.md"]
    assert (faq.authority, faq.category, faq.tags) == (0.5, "help", ("faq", "help"))
    assert dict(corpus.ignored_front_matter) == {
        "refunds.md": ("authority", "supersedes", "tenant"), "faq.md": ("authority",)}
    # The block stays in the text (offsets index the file) but out of the body, which alone
    # is chunked and shown.
    assert refunds.text == FRONT_MATTER
    assert refunds.body == "# Refunds\n\nRefunds take five days.\n"
    chunks = chunk_document(refunds)
    assert chunks and all(c.start >= refunds.body_start for c in chunks)
    assert all("authority" not in c.content and "---" not in c.content for c in chunks)


@pytest.mark.parametrize(("name", "raw", "title"), [
    ("crlf.txt", b"Opening hours\r\n\r\nWe open at 9.\r\nWe close at 5.\r\n", "Opening hours"),
    ("cr.txt", b"Opening hours\r\rWe open at 9.\r", "Opening hours"),
    ("bom.txt", b"\xef\xbb\xbfOpening hours\n\nWe open at 9.\n", "Opening hours"),
    ("bom.md", b"\xef\xbb\xbf# Hours\n\nWe open at 9.\n", "Hours"),
    ("front-crlf.md", b"\xef\xbb\xbf---\r\ncategory: hours\r\n# a note\r\n---\r\n\r\n"
                      b"# Hours\r\n\r\nWe open at 9.\r\n", "Hours"),
])
def test_text_and_markdown_offsets_index_the_file_as_python_reads_it(tmp_path: Path, name,
                                                                      raw, title):
    """`open(path, encoding="utf-8").read()`: universal newlines, a byte-order mark kept."""
    (tmp_path / name).write_bytes(raw)
    doc = load_file(tmp_path / name, name)
    with open(tmp_path / name, encoding="utf-8") as f:
        file_text = f.read()
    assert doc.text == file_text and doc.title == title
    chunks = chunk_document(doc)
    assert chunks
    for c in chunks:
        assert file_text[c.start : c.end] == c.content and c.start >= doc.body_start
        assert "\ufeff" not in c.content and "category" not in c.content
    assert {c.section for c in chunks} <= {title}  # a `# comment` in front matter is no heading


def test_a_front_matter_tenant_the_operator_did_not_set_keeps_the_file_out(tmp_path: Path):
    kb = write_kb(tmp_path / "kb", {"acme.md": "---\ntenant: acme\n---\n# Acme\n\nPrivate.\n",
                                    "public.md": "# Public\n\nFor everyone.\n"})
    corpus = load_corpus([kb])
    assert [d.source for d in corpus.documents] == ["public.md"]
    (skip,) = corpus.skipped
    assert skip.path == "acme.md" and "only the operator's citadel-sources.toml" in skip.reason


def test_html_extraction_keeps_headings_and_drops_scripts():
    extracted = extract_html(
        "<html><head><title>T</title><script>evil()</script></head>"
        "<body><h2>Validity</h2><p>Cards last   24 months.</p></body></html>"
    )
    assert extracted.meta["title"] == "T"
    assert extracted.text == "## Validity\n\nCards last 24 months.\n"


def test_bad_files_are_skipped_with_reasons(tmp_path: Path):
    (tmp_path / "good.md").write_text("# Good\n\nFine text here.")
    (tmp_path / "empty.md").write_text("  \n")
    (tmp_path / "binary.txt").write_bytes(b"\x00\x01\x02abc")
    (tmp_path / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    (tmp_path / "big.txt").write_text("x" * 2000)
    (tmp_path / "bad.md").write_text("---\ndate: soon\n---\n# Bad\n\ntext")
    (tmp_path / "odd.md").write_text("---\ntitle: |\n  two\n  lines\n---\n# Odd\n\ntext")
    (tmp_path / "bare.md").write_text("---\ntitle: Only front matter\n---\n\n")
    corpus = load_corpus([tmp_path], max_file_bytes=1000)
    assert [d.document_id for d in corpus.documents] == ["good"]
    reasons = {s.path: s.reason for s in corpus.skipped}
    assert reasons["empty.md"] == "empty file"
    assert reasons["binary.txt"] == "binary file"
    assert reasons["latin1.txt"] == "not valid UTF-8 text"
    assert "unsupported" in reasons["image.png"]
    assert "too large" in reasons["big.txt"]
    assert "is not a date" in reasons["bad.md"]
    assert reasons["odd.md"] == "front matter 'title': line 2: multi-line strings are not read"
    assert reasons["bare.md"] == "no text after the front matter"


def test_html_hidden_text_is_kept_apart_and_its_spans_returned():
    extracted = extract_html(
        "<body><p>Shown.</p><div style='display: none'><p>Hidden one.</p><p>Two.</p></div>"
        "<p>Shown <span hidden>secret</span> again.</p>"
        "<p style='font-size:0.8em'>Small but shown.</p><p style='font-size:0px'>Zero.</p>"
        "<p aria-hidden='true'>Aria.</p><p style='visibility:hidden'>Invisible.</p>"
        "<img hidden src='x.png'><p>Last.</p></body>"
    )
    hidden = [extracted.text[a:b] for a, b in extracted.hidden_spans]
    assert hidden == ["Hidden one.\n\nTwo.", "secret", "Zero.\n\nAria.\n\nInvisible."]
    for visible in ("Shown.", "Shown", "again.", "Small but shown.", "Last."):
        assert visible in extracted.text


def test_html_without_hidden_text_has_no_hidden_spans():
    assert extract_html("<p>Plain.</p>").hidden_spans == ()


def test_html_tables_become_rows_with_their_header_and_cells_apart():
    text = extract_html("<table><tr><th>Treatment</th><th>Fee</th></tr>"
                        "<tr><td>Porcelain crown</td><td>$1,350</td></tr>"
                        "<tr><td>A | B</td><td>$5</td></tr></table>").text
    assert text.strip().split("\n\n") == ["| Treatment | Fee |", "|---|---|",
                                  "| Porcelain crown | $1,350 |", "| A / B | $5 |"]


def test_html_list_items_and_definition_lists_keep_their_shape():
    text = extract_html("<p>We deliver to:</p><ul><li>Ireland</li><li>France</li></ul>"
                        "<dl><dt>Phone:</dt><dd>(503) 555-0148</dd></dl>").text
    assert text.strip().split("\n\n") == ["We deliver to:", "- Ireland", "- France",
                                  "Phone: (503) 555-0148"]


CHROME_PAGE = """<body><header><a href="/">Acme Help</a></header>
<nav><a href="/a">A</a></nav><div role="navigation">Breadcrumbs</div><menu><li>Tools</li></menu>
<main><article><header><h1>Returns</h1><p>Updated in May</p></header>
<p>Returns are accepted within 30 days.</p><aside>Keep the receipt.</aside>
<footer>Filed under policies</footer></article>
<section><header><h2>Exchanges</h2></header><p>Exchanges are free.</p></section></main>
<aside>Popular articles</aside><div role="contentinfo">Terms</div><footer>Copyright Acme</footer>
</body>"""


def test_a_web_page_is_read_without_its_sites_chrome_and_its_articles_own_header_stays():
    page = extract_html(CHROME_PAGE, page_only=True).text
    assert page == ("# Returns\n\nUpdated in May\n\nReturns are accepted within 30 days.\n\n"
                    "Keep the receipt.\n\nFiled under policies\n\n## Exchanges\n\n"
                    "Exchanges are free.\n")
    whole = extract_html(CHROME_PAGE).text  # a file keeps everything, as before
    assert "Acme Help" in whole and "Popular articles" in whole and "Copyright Acme" in whole


def test_blocks_named_to_drop_are_left_out_with_offsets_and_hidden_spans_intact():
    html = ('<p>Still need help?</p><p>Keep it.</p><p style="display:none">Secret</p>'
            "<p>Still need help?</p>")
    extracted = extract_html(html, drop_blocks={"Still need help?"})
    assert extracted.text == "Keep it.\n\nSecret\n"
    (start, end), = extracted.hidden_spans
    assert extracted.text[start:end] == "Secret"


@pytest.mark.parametrize(("url", "expected"), [
    ("https://help.example.com/help/returns.html", "help.example.com/help/returns"),
    ("https://Help.Example.com/", "help.example.com"),
    ("http://127.0.0.1:8765/faq/", "127.0.0.1-8765/faq"),
    ("https://h/article?id=5&lang=en", "h/article-id-5-lang-en"),
    ("https://h/docs/Caf%C3%A9%20Menu.pdf", "h/docs/caf-menu"),  # as a file name is
])
def test_a_web_pages_id_is_its_urls_host_and_path_slugged(url, expected):
    assert document_id(url) == expected


def test_a_list_item_left_open_ends_with_its_list():
    text = extract_html("<ul><li>One<li>Two</ul><p>After the list.</p>").text
    assert text == "- One\n\n- Two\n\nAfter the list.\n"
