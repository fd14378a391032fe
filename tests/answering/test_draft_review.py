"""Deciding whether a gated draft may be shown, and naming what was wrong."""

from citadel.answering.draft_review import attempt_record, review
from citadel.gate import gate
from citadel.records import Draft, DraftCitation, DraftSentence
from tests.test_gate import context_of, make_chunk

CONTEXT = context_of(make_chunk())


def draft(*sentences, **kw) -> Draft:
    return Draft(sentences=tuple(
        DraftSentence(text=text, citations=tuple(DraftCitation(label=lb, quote=q)
                                                 for lb, q in cites))
        for text, cites in sentences), generator="t", prompt_version="p", **kw)


def reviewed(d: Draft, threshold: float = 0.5):
    result = gate(d, CONTEXT, "kb")
    return review(d, result, support_threshold=threshold), result


def test_a_fully_cited_draft_is_accepted():
    feedback, _ = reviewed(draft(("Returns are accepted within 30 days [S1].",
                                  [("S1", "Returns are accepted within 30 days")])))
    assert feedback is None


def test_an_unparseable_draft_is_refused_with_the_parse_error():
    feedback, _ = reviewed(Draft(failure="the reply is not a JSON object", generator="t",
                                 prompt_version="p"))
    assert feedback.reasons == ("unparseable",)
    assert "not a JSON object" in feedback.problems[0]


def test_an_abstention_is_accepted():
    assert reviewed(Draft(abstain=True, generator="t", prompt_version="p"))[0] is None


def test_an_uncited_factual_sentence_is_refused_but_filler_is_not():
    ok = ("Returns are accepted within 30 days [S1].", [("S1", "within 30 days of delivery")])
    feedback, _ = reviewed(draft(ok, ("Hope this helps!", [])))
    assert feedback is None
    feedback, _ = reviewed(draft(ok, ("Refunds reach your card within 5 business days.", [])))
    assert feedback.reasons == ("uncited_sentence",)
    assert "Refunds reach your card" in feedback.problems[0]


def test_a_number_the_quotes_do_not_contain_is_refused():
    feedback, _ = reviewed(draft(("Returns are accepted within 45 days [S1].",
                                  [("S1", "Returns are accepted within 30 days")])))
    assert feedback.reasons == ("unsupported_number",) and "45" in feedback.problems[0]


def test_low_support_is_refused_and_each_drop_is_named():
    d = draft(("Returns are accepted within 30 days [S1].",
               [("S1", "Returns are accepted within 30 days"), ("S9", "x y z"),
                ("S1", "within 31 days")]))
    feedback, result = reviewed(d, threshold=0.5)
    assert feedback.reasons == ("low_support",)
    assert any('"S9" is not the label' in p for p in feedback.problems)
    assert any("not in block S1" in p for p in feedback.problems)
    record = attempt_record(d, result, feedback)
    assert (record.citations_attempted, record.citations_verified) == (3, 1)
    assert record.dropped == {"label_not_in_context": 1, "quote_not_found": 1}
    assert record.problem == "low_support"


def test_unattached_citations_are_dropped_by_the_gate_and_counted():
    d = draft(("Returns are accepted within 30 days [S1].",
               [("S1", "Returns are accepted within 30 days")]),
              unattached=(DraftCitation(label="S1", quote="Items must be unworn"),))
    result = gate(d, CONTEXT, "kb")
    assert [x.reason for x in result.dropped] == ["unattached"]
    assert len(result.citations) == 1  # an unattached citation is never emitted
    assert review(d, result, support_threshold=0.5) is None  # 1 of 2 survived: enough


def test_a_sentence_its_verified_quote_does_not_support_is_refused():
    """The gate verified the quote; the sentence says something else entirely."""
    feedback, _ = reviewed(draft(("All refunds are approved instantly without any checks [S1].",
                                  [("S1", "Returns are accepted within 30 days")])))
    assert feedback.reasons == ("unsupported_claim",)
    assert "says more than its quotes" in feedback.problems[0]


def test_a_name_missing_from_the_quote_is_refused():
    feedback, _ = reviewed(draft(("Returns are accepted by Amazon within 30 days [S1].",
                                  [("S1", "Returns are accepted within 30 days")])))
    assert feedback.reasons == ("unsupported_claim",) and "Amazon" in feedback.problems[0]


def test_a_quote_of_a_few_words_is_too_short_to_support_a_sentence():
    feedback, _ = reviewed(draft(("Returns are accepted within 30 days [S1].",
                                  [("S1", "30 days")])))
    assert feedback.reasons == ("unsupported_claim",) and "too short" in feedback.problems[0]
