"""Reading a model's structured answer defensively, and mapping it to a Draft."""

import pytest

from citadel.answering.generators.structured_output import (
    OutputError,
    StructuredAnswer,
    answer_sentences,
    marker_labels,
    normalize_label,
    parse_structured,
    to_draft,
)

GOOD = '{"answer": "Returns within 30 days [S1].", "citations": [{"id": "S1", "quote": ' \
       '"within 30 days"}], "confidence": 0.8}'


@pytest.mark.parametrize("text", [
    GOOD,
    f"```json\n{GOOD}\n```",
    f"Here is my answer:\n{GOOD}\nLet me know if you need anything else! {{not json}}",
    GOOD.replace('"', "'"),
    GOOD.replace("}]", "},]").replace("0.8}", "0.8,}"),
])
def test_parse_tolerates_fences_prose_single_quotes_and_trailing_commas(text):
    parsed = parse_structured(text)
    assert parsed.answer == "Returns within 30 days [S1]."
    assert parsed.citations == (("S1", "within 30 days"),)
    assert parsed.confidence == 0.8


@pytest.mark.parametrize("text, message", [
    ("", "empty"),
    ("The answer is 30 days [S1].", "not a JSON object"),
    ('{"answer": "Returns within 30 days", "citations": [{"id"', "not a JSON object"),
    ('{"citations": []}', '"answer"'),
    ('{"answer": "x", "citations": "S1"}', "not a list"),
    ('{"answer": "x", "citations": [3]}', "neither"),
])
def test_parse_refuses_what_is_not_a_structured_answer(text, message):
    with pytest.raises(OutputError, match=message):
        parse_structured(text)


def test_parse_keeps_apostrophes_and_escapes_inside_strings():
    parsed = parse_structured('{"answer": "It\'s \\"free\\"\\n[S2]", "citations": [], '
                              '"confidence": "90%"}')
    assert parsed.answer == 'It\'s "free"\n[S2]' and parsed.confidence == 0.9


def test_parse_accepts_raw_newlines_inside_strings():
    # Seen from SmolLM2 under llama.cpp's JSON grammar: a literal line break in a string.
    parsed = parse_structured('{ "answer": "}\nThe answer is: {" ,"citations":[] ,'
                              '"confidence":0.9}')
    assert parsed.answer == "}\nThe answer is: {" and parsed.citations == ()


def test_parse_keeps_python_words_inside_strings():
    parsed = parse_structured("{'answer': 'None of the items, True or False, are refundable.',"
                              " 'citations': [], 'confidence': None}")
    assert parsed.answer == "None of the items, True or False, are refundable."
    assert parsed.confidence is None


@pytest.mark.parametrize("ident, label", [("S1", "S1"), (" s2 ", "S2"), ("[S3]", "S3"),
                                          ("S04", "S4"), ("spec.pdf", "spec.pdf")])
def test_normalize_label_accepts_only_label_spellings(ident, label):
    assert normalize_label(ident) == label


def test_marker_labels_split_lists_and_keep_anything_else_whole():
    text = "A [S1, S2]. B [s3][S4 and S5]. C [Source: internal_spec_v3.pdf §4.2]."
    assert marker_labels(text) == ["S1", "S2", "S3", "S4", "S5",
                                   "Source: internal_spec_v3.pdf §4.2"]


def test_a_marker_after_the_full_stop_stays_with_its_sentence():
    assert answer_sentences("Returns take 30 days. [S1] Gift cards last 2 years. [S2]") == [
        "Returns take 30 days. [S1]", "Gift cards last 2 years. [S2]"]


def draft_of(answer, *citations):
    return to_draft(StructuredAnswer(answer, tuple(citations), 0.5), generator="t",
                    prompt_version="p")


def test_citations_go_to_the_sentences_whose_markers_name_them():
    d = draft_of("Returns take 30 days [S1]. Gift cards are valid for 2 years [S2].",
                 ("S2", "Gift cards are valid for 2 years"), ("S1", "Returns take 30 days"))
    assert [[(c.label, c.quote) for c in s.citations] for s in d.sentences] == [
        [("S1", "Returns take 30 days")], [("S2", "Gift cards are valid for 2 years")]]
    assert d.unattached == ()


def test_unmarked_citation_goes_to_the_sentence_its_quote_supports():
    d = draft_of("Gift cards last 2 years. Returns take 30 days.",
                 ("S1", "Returns are accepted within 30 days"))
    assert d.sentences[0].citations == ()
    assert [c.label for c in d.sentences[1].citations] == ["S1"]


def test_a_marker_without_a_listed_citation_becomes_a_quoteless_citation():
    d = draft_of("Returns take 30 days [S3].", ("S1", "Returns take 30 days"))
    labels = [(c.label, c.quote) for c in d.sentences[0].citations]
    assert labels == [("S1", "Returns take 30 days"), ("S3", "")]


def test_a_citation_that_supports_no_sentence_is_unattached():
    d = draft_of("Returns take 30 days [S1].", ("S1", "Returns take 30 days"),
                 ("S2", "Gift cards are wrapped in paper"))
    assert [(c.label, c.quote) for c in d.unattached] == [
        ("S2", "Gift cards are wrapped in paper")]


def test_not_enough_information_is_an_abstention_and_empty_is_a_failure():
    assert draft_of("I don't have enough information to answer that.").abstain
    assert draft_of("   ").failure == "the answer is empty"
    assert not draft_of("Returns take 30 days.").abstain  # factual, uncited: for the gate
