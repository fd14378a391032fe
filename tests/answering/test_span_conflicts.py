"""Conflicts on answer spans: normalisation, agreement, and the authority rule."""

from citadel.answering.answer_norm import words_of
from citadel.answering.span_conflicts import span_conflict, spans_agree
from citadel.records import Judgement, QuestionAnalysis, SentenceJudgement, TypedSpan
from tests.helpers_kb import chunk, context


def test_spans_agree_after_normalisation():
    assert spans_agree("Lyon, France", "Lyon")
    assert spans_agree("30 days", "thirty days")
    assert spans_agree("the 10th century", "10th century")
    assert spans_agree("two weeks", "14 days")
    assert words_of("Thirty Days") == ("30", "days")


def test_different_values_disagree():
    assert not spans_agree("Lyon", "Turin")
    assert not spans_agree("30 days", "90 days")
    assert not spans_agree("1066", "1067")


def _judged(label, chunk_id, text, value, kind="GPE", score=0.9, matched=("headquarter",)):
    start = text.index(value)
    return SentenceJudgement(
        label=label, chunk_id=chunk_id, document_id=chunk_id.split("#")[0], start=0,
        end=len(text), text=text, answers=True, score=score,
        span=TypedSpan(start=start, end=start + len(value), kind=kind, head=value.lower()),
        span_text=value, candidates=(value,), matched=matched)


def _case(a_text, a_value, b_text, b_value, a_authority=0.5, b_authority=0.5):
    ctx = context(chunk("hq-a#1", a_text, authority=a_authority),
                  chunk("hq-b#1", b_text, authority=b_authority))
    labels = {b.chunk.chunk_id: b.label for b in ctx.blocks}
    judgement = Judgement(
        question=QuestionAnalysis(wh="where", expected=("GPE",), focus=("headquarter",)),
        sentences=(_judged(labels["hq-a#1"], "hq-a#1", a_text, a_value),
                   _judged(labels["hq-b#1"], "hq-b#1", b_text, b_value, score=0.8)),
        threshold=0.5, model="test")
    return span_conflict(judgement, ctx, authority_gap=0.5)


def test_swapped_entity_is_flagged_with_both_sides():
    conflict = _case("The company is headquartered in Lyon.", "Lyon",
                     "The company is headquartered in Turin.", "Turin")
    assert conflict is not None and conflict.resolution == "flagged"
    assert set(conflict.values) == {"Lyon", "Turin"}
    assert {s.chunk_id for s in conflict.sides} == {"hq-a#1", "hq-b#1"}


def test_agreeing_spans_are_no_conflict():
    assert _case("The company is headquartered in Lyon, France.", "Lyon, France",
                 "The company is headquartered in Lyon.", "Lyon") is None


def test_clearly_more_authoritative_side_is_followed():
    conflict = _case("The company is headquartered in Lyon.", "Lyon",
                     "Someone said the company is headquartered in Turin.", "Turin",
                     a_authority=1.0, b_authority=0.2)
    assert conflict is not None and conflict.resolution == "authoritative"
    assert conflict.preferred_chunk_id == "hq-a#1"


def test_sentences_about_another_focus_do_not_conflict():
    ctx = context(chunk("a#1", "Lyon is large."), chunk("b#1", "Turin is old."))
    sentences = (
        _judged(ctx.blocks[0].label, ctx.blocks[0].chunk.chunk_id, "Lyon is large.", "Lyon",
                matched=("large",)),
        _judged(ctx.blocks[1].label, ctx.blocks[1].chunk.chunk_id, "Turin is old.", "Turin",
                matched=("old",)))
    judgement = Judgement(question=QuestionAnalysis(wh="where", expected=("GPE",)),
                          sentences=sentences, threshold=0.5, model="test")
    assert span_conflict(judgement, ctx) is None


def test_values_that_do_not_compare_dispute_only_the_same_statement():
    # One sentence with its value changed to another kind: a twin, so a dispute.
    twin = _case("Genghis Khan became Great Khan in 1206 after uniting the tribes.", "1206",
                 "Genghis Khan became Great Khan in two-week after uniting the tribes.",
                 "two-week")
    assert twin is not None and set(twin.values) == {"1206", "two-week"}
    # Two different statements whose values do not compare: nothing is disputed.
    apart = _case("The headquarters opened in 1206 near the river gate.", "1206",
                  "Staff at the headquarters work two-week shifts in the summer.", "two-week")
    assert apart is None
