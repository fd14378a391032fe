from pathlib import Path

from citadel.ingest.loaders import extract_html, load_corpus, parse_front_matter
from tests.conftest import DEMO_KB


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


def test_front_matter_accepts_quotes_and_ignores_comments():
    meta = parse_front_matter('---\ntitle: "A: B"\n# note\nauthority: 0.3\n---\nbody')
    assert meta == {"title": "A: B", "authority": "0.3"}


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
    (tmp_path / "bad.md").write_text("---\nauthority: high\n---\n# Bad\n\ntext")
    corpus = load_corpus([tmp_path], max_file_bytes=1000)
    assert [d.document_id for d in corpus.documents] == ["good"]
    reasons = {s.path: s.reason for s in corpus.skipped}
    assert reasons["empty.md"] == "empty file"
    assert reasons["binary.txt"] == "binary file"
    assert reasons["latin1.txt"] == "not valid UTF-8 text"
    assert "unsupported" in reasons["image.png"]
    assert "too large" in reasons["big.txt"]
    assert "authority" in reasons["bad.md"]


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
