import datetime as dt
from pathlib import Path

from citadel.ingest.chunking import chunk_document
from citadel.ingest.loaders import extract_html, load_corpus
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


def test_demo_kb_markdown_text_has_no_front_matter():
    by_id = {d.document_id: d for d in load_corpus([DEMO_KB]).documents}
    policy = by_id["refunds-policy"]
    assert policy.text.startswith("# Refunds and Returns Policy\n")
    assert "effective_date" not in policy.text and "---" not in policy.text[:10]


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
    # The block is stripped from the text that is stored, shown and chunked.
    assert refunds.text == "# Refunds\n\nRefunds take five days.\n"
    assert all("authority" not in c.content for c in chunk_document(refunds))


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
