"""Sentence-vs-quote support: what the LLM review refuses beyond the gate."""

from citadel.text.support import claim_support


def test_sentence_unrelated_to_its_quote_has_no_coverage():
    s = claim_support("All refunds are approved instantly without any checks [S1].",
                      ["You can return anything within 90 days"])
    assert s.coverage == 0.0
    assert "refund" in s.missing_terms


def test_paraphrase_sharing_the_key_words_is_covered():
    s = claim_support("You can return items within 30 days of delivery [S1].",
                      ["Returns are accepted within 30 days of delivery."])
    assert s.coverage >= 0.5 and not s.missing_names


def test_a_name_the_quote_lacks_is_reported():
    s = claim_support("Parcels to Iceland are delivered by DHL [S2].",
                      ["Parcels to Iceland are delivered by Posturinn"])
    assert s.missing_names == ("DHL",)


def test_sentence_initial_capital_is_not_a_name():
    s = claim_support("Returns are free.", ["returns are free of charge"])
    assert s.missing_names == () and s.coverage == 1.0


def test_quote_words_counts_all_quotes():
    assert claim_support("x", ["thirty days", "of delivery"]).quote_words == 4
