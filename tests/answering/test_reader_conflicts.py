"""Conflicts the reader can see (issue 30): answer normalisation, the agree / compatible /
conflict decision, the rule on judged sentences, and end to end through the engine."""

import pytest

from citadel.answering.answer_norm import answers_relation, normalise
from citadel.answering.reader_conflicts import kept_conflict, reader_conflict
from citadel.engine import Engine
from citadel.gate import gate
from citadel.ingest.pipeline import ingest
from citadel.records import (
    Draft,
    DraftCitation,
    DraftSentence,
    Judgement,
    QuestionAnalysis,
    SentenceJudgement,
    TypedSpan,
)
from citadel.retrieval.embedders.hashing import HashingEmbedder
from tests.conftest import hashing_settings
from tests.helpers_kb import chunk, context

# --- normalisation ---------------------------------------------------------------------


def test_numbers_in_words_digits_and_scales_read_alike():
    assert normalise("thirty days").value.low == normalise("30 days").value.low == 30
    assert normalise("1,500,000").value.low == normalise("1.5 million").value.low
    assert normalise("Thirty").words == ("30",)


def test_dates_in_any_common_format_read_alike():
    same = ["12 March 1998", "March 12, 1998", "1998-03-12", "12th of March 1998"]
    assert {normalise(d).value.dates for d in same} == {((1998, 3, 12),)}
    assert normalise("in 1998").value.dates == ((1998, None, None),)
    assert normalise("March 1998").value.dates == ((1998, 3, None),)


def test_units_are_converted_within_a_dimension():
    assert answers_relation("2 weeks", "14 days") == "agree"
    assert answers_relation("5 km", "five kilometres") == "agree"
    assert answers_relation("$20", "20 dollars") == "agree"
    assert answers_relation("15%", "15 percent") == "agree"
    assert answers_relation("5 km", "5 miles") == "unrelated"  # not converted: no verdict


def test_a_place_with_its_qualifier_is_the_place():
    assert answers_relation("Lyon, France", "Lyon") == "agree"
    assert normalise("Lyon, France").head == ("lyon",)


# --- agree / compatible / conflict ------------------------------------------------------


@pytest.mark.parametrize(("a", "b", "expected"), [
    ("1998", "1999", "conflict"),
    ("in 1998", "in March 1998", "compatible"),
    ("12/03/1998", "1998-03-12", "agree"),
    ("Lyon", "Turin", "conflict"),
    ("Leeds", "the Leeds warehouse", "compatible"),
    ("30 days", "90 days", "conflict"),
    ("thirty days", "two months", "conflict"),
    ("1066", "William the Conqueror", "unrelated"),  # a year and a name: two questions
])
def test_relation(a, b, expected):
    assert answers_relation(a, b) == expected


def test_tagged_kinds_must_match_but_untagged_names_count():
    assert answers_relation("Lyon", "Jean Dupont", "GPE", "PERSON") == "unrelated"
    assert answers_relation("Leeds", "Rotterdam", "GPE", "ANSWER") == "conflict"


# --- the rule on judged sentences --------------------------------------------------------

LEEDS = "All returns are sent to our warehouse in Leeds, United Kingdom."
ROTTERDAM = "All returns are sent to our warehouse in Rotterdam by post."


def _judged(block, text, answer, reader=0.9, answers=False, kind="ANSWER"):
    start = text.index(answer)
    return SentenceJudgement(
        label=block.label, chunk_id=block.chunk.chunk_id, document_id=block.chunk.document_id,
        start=0, end=len(text), text=text, answers=answers, score=0.2,
        answer=TypedSpan(start=start, end=start + len(answer), kind=kind,
                         head=answer.split()[-1].lower()),
        answer_text=answer, reader=reader, matched=("return", "send"))


def _returns(a_text, a_answer, b_text, b_answer, a_authority=0.5, b_authority=0.5, **kw):
    ctx = context(chunk("policy#1", a_text, authority=a_authority),
                  chunk("help#1", b_text, authority=b_authority))
    judgement = Judgement(
        question=QuestionAnalysis(wh="where", expected=("GPE",), focus=("return", "send")),
        sentences=(_judged(ctx.blocks[0], a_text, a_answer, kind="GPE"),
                   _judged(ctx.blocks[1], b_text, b_answer, **kw)),
        threshold=0.5, model="test")
    return judgement, ctx


def test_a_name_the_tagger_does_not_know_is_still_a_side():
    judgement, ctx = _returns(LEEDS, "Leeds, United Kingdom", ROTTERDAM, "Rotterdam")
    conflict = reader_conflict(judgement, ctx, authority_gap=0.5)
    assert conflict is not None and conflict.resolution == "flagged"
    assert {s.document_id for s in conflict.sides} == {"policy", "help"}
    assert {s.quote for s in conflict.sides} == {LEEDS, ROTTERDAM}


def test_the_more_authoritative_side_is_followed():
    judgement, ctx = _returns(LEEDS, "Leeds", ROTTERDAM, "Rotterdam", a_authority=1.0,
                              b_authority=0.2)
    conflict = reader_conflict(judgement, ctx, authority_gap=0.5)
    assert conflict is not None and conflict.resolution == "authoritative"
    assert conflict.preferred_chunk_id == "policy#1"


def test_agreeing_or_compatible_answers_are_no_conflict():
    judgement, ctx = _returns(LEEDS, "Leeds, United Kingdom",
                              "All returns are sent to our Leeds warehouse by post.",
                              "Leeds warehouse")
    assert reader_conflict(judgement, ctx) is None


def test_a_reader_that_is_unsure_of_one_side_raises_nothing():
    judgement, ctx = _returns(LEEDS, "Leeds", ROTTERDAM, "Rotterdam", reader=0.1)
    assert reader_conflict(judgement, ctx) is None


def test_sentences_about_different_things_are_no_conflict():
    other = "Rotterdam is home to the largest seaport in Europe and many museums."
    judgement, ctx = _returns(LEEDS, "Leeds", other, "Rotterdam")
    assert reader_conflict(judgement, ctx) is None


def test_a_model_citing_one_side_carries_the_conflict():
    # The policy sentence is below the reader's cut-off, so the rule before generation
    # sees one answering side; the model vouches for it by citing it.
    judgement, ctx = _returns(LEEDS, "Leeds", ROTTERDAM, "Rotterdam")
    low = judgement.sentences[0].model_copy(update={"reader": 0.1})
    judgement = judgement.model_copy(update={"sentences": (low, judgement.sentences[1])})
    assert reader_conflict(judgement, ctx) is None
    draft = Draft(sentences=(DraftSentence(text="Returns go to Leeds.", citations=(
        DraftCitation(label=ctx.blocks[0].label, quote=LEEDS),)),), generator="t",
        prompt_version="t")
    result = gate(draft, ctx, "snap")
    conflict = kept_conflict(result, judgement, ctx)
    assert conflict is not None and {s.document_id for s in conflict.sides} == {"policy", "help"}


# --- end to end ----------------------------------------------------------------------------

SWAPPED = {
    "depot-a.md": "# Returns depot\n\nCustomer returns are processed at the Brindlewick depot "
                  "in Harrowgate. Parcels are checked within two days.\n",
    "depot-b.md": "# Returns depot notes\n\nCustomer returns are processed at the "
                  "Brindlewick depot in Quarrington. Parcels are checked within two days.\n",
}
PARAPHRASED = {
    "depot-a.md": SWAPPED["depot-a.md"],
    "depot-c.md": "# Depot guide\n\nThe Brindlewick depot, where customer returns are "
                  "processed, is in Harrowgate, Yorkshire.\n",
}


def _engine(tmp_path, files, authority=None):
    kb = tmp_path / "kb"
    kb.mkdir()
    for name, text in files.items():
        (kb / name).write_text(text)
    if authority:
        (kb / "citadel-sources.toml").write_text("".join(
            f'[sources."{n}"]\nauthority = {a}\n\n' for n, a in authority.items()))
    settings = hashing_settings(tmp_path / "home")
    ingest([kb], settings, embedder=HashingEmbedder(), progress=False)
    return Engine.open(settings, embedder=HashingEmbedder())


QUESTION = "Where are customer returns processed?"


def _ask(tmp_path, files, authority=None):
    engine = _engine(tmp_path, files, authority)
    try:
        return engine.answer(QUESTION)
    finally:
        engine.close()


def test_a_swapped_pair_is_flagged_with_both_sides_cited(tmp_path):
    answer = _ask(tmp_path, SWAPPED)
    assert answer.conflict is not None and answer.conflict.resolution == "flagged"
    assert {c.document_id for c in answer.citations} == {"depot-a", "depot-b"}
    assert "Harrowgate" in answer.answer and "Quarrington" in answer.answer


def test_an_authority_gap_is_resolved_and_said(tmp_path):
    answer = _ask(tmp_path, SWAPPED, {"depot-a.md": 1.0, "depot-b.md": 0.2})
    assert answer.conflict is not None and answer.conflict.resolution == "authoritative"
    assert answer.conflict.preferred_chunk_id.startswith("depot-a")
    assert "Harrowgate" in answer.answer and "Note:" in answer.answer
    assert "Quarrington" in answer.answer and "more authoritative" in answer.answer


def test_two_paraphrases_of_one_answer_are_no_conflict(tmp_path):
    answer = _ask(tmp_path, PARAPHRASED)
    assert answer.conflict is None


@pytest.mark.xfail(strict=True, reason="retrieval does not reach the refunds policy's Leeds "
                   "chunk (rank 11; the context holds 4 chunks): docs/conflicts.md")
def test_the_demo_returns_address_answers_leeds_and_flags_rotterdam(hashing_engine):
    answer = hashing_engine.answer("Where should I send my return?")
    assert answer.conflict is not None and "Leeds" in answer.answer
    assert "Rotterdam" in answer.answer
    assert {c.document_id for c in answer.citations} >= {"refunds-policy", "sending-a-return"}
