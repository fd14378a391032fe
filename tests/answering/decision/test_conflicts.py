"""decision.conflicts: a conflict is one between answers to the question asked."""

import pytest

from citadel.answering.conflicts import wanted_values
from citadel.answering.decision.conflicts import of_the_asked_kind, on_the_question, side_kind
from citadel.records import Conflict, ConflictSide, Judgement, QuestionAnalysis, SentenceJudgement


def side(value: str, quote: str, chunk: str = "a#1") -> ConflictSide:
    return ConflictSide(label="S1", chunk_id=chunk, document_id=chunk.split("#")[0], title="t",
                        value=value, quote=quote, authority=1.0)


def conflict(*sides: ConflictSide) -> Conflict:
    return Conflict(attribute="x", values=tuple(s.value for s in sides),
                    chunk_ids=tuple(s.chunk_id for s in sides), sides=sides)


def judged(chunk: str, text: str, answers: bool, reader: float | None = None) -> SentenceJudgement:
    return SentenceJudgement(label="S1", chunk_id=chunk, document_id=chunk.split("#")[0],
                             start=0, end=len(text), text=text, answers=answers, score=0.5,
                             reader=reader)


def test_a_value_is_read_where_its_quote_states_it():
    assert side_kind(side("8", "| Starter | $8 | $10 | up to 50 users |")) == "money"
    assert side_kind(side("five", "The Free plan is for up to five users.")) == "number"
    assert side_kind(side("the Leeds warehouse", "Returns go to the Leeds warehouse.")) is None


@pytest.mark.parametrize("question, kinds", [
    ("How many users can we have on the free plan?", {"number"}),
    ("How much is a porcelain crown?", {"money"}),
    ("How much notice do I need to give?", {"duration"}),
    ("What do I need to bring?", None),
])
def test_cue_words_say_which_kinds_of_value_answer(question, kinds):
    wanted = wanted_values(question)
    assert (wanted is None) if kinds is None else kinds <= wanted


def test_values_of_another_kind_than_asked_are_no_conflict():
    users = conflict(side("8", "| Starter | $8 | $10 |"), side("five", "up to five users",
                                                                  "b#1"))
    assert not of_the_asked_kind(users, "How many users can we have on the free plan?")
    hold = conflict(side("10 days", "We hold orders for 10 days."),
                    side("7 days", "Orders are held for 7 days.", "b#1"))
    assert of_the_asked_kind(hold, "How long do you hold orders?")
    assert of_the_asked_kind(hold, "What do I need to bring?")  # no cue: kept


def test_every_side_must_answer_the_question():
    sides = (side("10 days", "We hold orders for 10 days."),
             side("7 days", "Orders are held for 7 days.", "b#1"))
    question = QuestionAnalysis(wh="how long")

    def judgement(*sentences):
        return Judgement(question=question, sentences=sentences, threshold=0.5, model="t")
    both = judgement(judged("a#1", sides[0].quote, True), judged("b#1", sides[1].quote, False,
                                                                 reader=0.6))
    assert on_the_question(conflict(*sides), both)
    one = judgement(judged("a#1", sides[0].quote, True), judged("b#1", sides[1].quote, False,
                                                                reader=0.1))
    assert not on_the_question(conflict(*sides), one)
