"""The tantivy BM25 index: the unfiltered fast path scores exactly as the filtered one."""

from citadel.retrieval.lexical import LexicalIndex, build_index, query_terms

TEXTS = ["Refunds are paid within 5 business days of the return arriving.",
         "Gift cards are valid for 24 months from the date of purchase.",
         "Returns are accepted within 30 days of delivery.",
         "Express delivery is not available to PO boxes or the Channel Islands.",
         "Refunds for gift cards go back onto a new gift card."]
QUERIES = ["how long do refunds take", "are gift cards refundable", "delivery to PO boxes",
           "return within 30 days of the delivery date", "nothing matches zebra"]


def test_all_public_index_skips_the_filter_with_bit_identical_scores(tmp_path):
    build_index(tmp_path / "lex", ((i, t, None, "general") for i, t in enumerate(TEXTS)))
    fast, filtered = LexicalIndex(tmp_path / "lex"), LexicalIndex(tmp_path / "lex")
    filtered._all_public = False  # force the filtered query
    assert fast._all_public
    for q in QUERIES:
        assert fast.search(q, 3) == filtered.search(q, 3)
        assert fast.search(q, 3, tenant="acme") == filtered.search(q, 3, tenant="acme")
    assert fast.search("refunds", 5)  # the fast path finds things


def test_a_private_document_keeps_the_tenant_filter(tmp_path):
    rows = [(i, t, "acme" if i == 0 else None, "general") for i, t in enumerate(TEXTS)]
    build_index(tmp_path / "lex", rows)
    index = LexicalIndex(tmp_path / "lex")
    assert not index._all_public
    assert 0 not in index.search("refunds paid business days", 5)
    assert 0 in index.search("refunds paid business days", 5, tenant="acme")


def test_query_leaves_out_stop_words_unless_nothing_else_is_left():
    assert query_terms("Is the return window 30 days?") == ["return", "window", "30", "days"]
    assert query_terms("To be or not to be") == ["to", "be", "or", "not", "to", "be"]
    assert query_terms("") == []


def test_stop_words_do_not_score(tmp_path):
    build_index(tmp_path / "lex", ((i, t, None, "general") for i, t in enumerate(TEXTS)))
    index = LexicalIndex(tmp_path / "lex")
    # "the" and "of" are in four of the five texts: with them, the query would score those.
    assert index.search("the date of purchase", 5) == index.search("date purchase", 5)
    assert set(index.search("the date of purchase", 5)) == {1}
