"""Pages become documents that hold the page's own content, sourced by URL, with the
operator's metadata by URL."""

from __future__ import annotations

from citadel.ingest.operator_metadata import SourceMetadata
from citadel.ingest.web.crawl import Page
from citadel.ingest.web.fetch import Fetched
from citadel.ingest.web.pages import page_documents, repeated_blocks
from tests.ingest.web.help_centre import GIFT_CARDS, RETURNS, SHIPPING, article, pdf

BASE = "https://help.example.com"


def html_page(path: str, html: str) -> Page:
    return Page(Fetched(BASE + path, "text/html", "utf-8", html.encode()), BASE + path)


def help_pages() -> list[Page]:
    return [html_page("/help/returns", article("Returns", RETURNS)),
            html_page("/help/shipping", article("Shipping", SHIPPING)),
            html_page("/help/gift-cards", article("Gift cards", GIFT_CARDS))]


def test_a_page_keeps_its_content_without_the_sites_chrome_or_repeated_blocks():
    read = page_documents(help_pages(), {})
    returns = read.documents[0]
    assert returns.text == ("# Returns\n\nReturns are accepted within 30 days of delivery.\n\n"
                            "Refunds go back to the original payment method within 5 business "
                            "days.\n")
    assert (returns.source, returns.document_id, returns.title, returns.format) == (
        f"{BASE}/help/returns", "help.example.com/help/returns", "Returns", "html")


def test_a_block_is_the_sites_only_when_most_pages_and_at_least_three_repeat_it():
    two = page_documents(help_pages()[:2], {})
    assert all("Still need help?" in d.text for d in two.documents)
    assert repeated_blocks(["a\n\nshared\n\n|---|\n", "b\n\nshared\n\n|---|\n",
                            "c\n\nshared\n\n|---|\n", "d\n"]) == {"shared"}
    assert repeated_blocks(["a\n\nshared\n", "b\n\nshared\n", "c\n", "d\n"]) == frozenset()


def test_a_page_of_nothing_but_chrome_is_skipped_with_the_reason():
    empty = html_page("/menu", "<nav><a href='/a'>A</a></nav><footer>Acme</footer>")
    read = page_documents([*help_pages(), empty], {})
    assert [(s.path, s.reason) for s in read.skipped] == [
        (f"{BASE}/menu", "no text of its own (only navigation and blocks the site repeats on "
                         "most pages)")]


def test_the_operators_metadata_applies_by_url_and_a_page_cannot_set_its_own_authority():
    claims = html_page("/help/claims", article(
        "Claims", "<p>Claims are answered within a week.</p>",
        extra_head='<meta name="authority" content="1.0">'))
    rules = {f"{BASE}/help/re*": SourceMetadata(authority=0.9, category="policy")}
    docs = {d.source.removeprefix(BASE): d
            for d in page_documents([*help_pages(), claims], rules).documents}
    assert (docs["/help/returns"].authority, docs["/help/returns"].category) == (0.9, "policy")
    assert docs["/help/shipping"].authority == 0.5
    assert docs["/help/claims"].authority == 0.5
    assert docs["/help/claims"].flags  # the page's own claim: flagged, every chunk with it


def test_a_pdf_page_is_read_as_a_pdf_sourced_by_its_url():
    page = Page(Fetched(f"{BASE}/docs/Warranty.pdf", "application/pdf", None,
                        pdf("Every kettle carries a warranty of two years.")),
                f"{BASE}/docs/Warranty.pdf")
    (doc,) = page_documents([page], {}).documents
    assert (doc.document_id, doc.format, doc.title, doc.pages) == (
        "help.example.com/docs/warranty", "pdf", "Warranty", (0,))
    assert "two years" in doc.text
