"""The judgement's review of a gated draft: quotes must answer, and say what the sentence
says."""

from citadel.answering.draft_review import review_answers
from citadel.gate import gate
from citadel.records import (
    Draft,
    DraftCitation,
    DraftSentence,
    Judgement,
    QuestionAnalysis,
    SentenceJudgement,
    TypedSpan,
)
from tests.helpers_kb import chunk, context

TEXT = "The company is headquartered in Lyon. It was founded by two engineers."


def _ctx():
    ctx = context(chunk("hq#1", TEXT))
    answer = SentenceJudgement(
        label="S1", chunk_id="hq#1", document_id="hq", start=0, end=37,
        text="The company is headquartered in Lyon.", answers=True, score=0.9,
        span=TypedSpan(start=32, end=36, kind="GPE", head="lyon"), span_text="Lyon",
        candidates=("Lyon",), matched=("headquarter",))
    other = SentenceJudgement(
        label="S1", chunk_id="hq#1", document_id="hq", start=38, end=len(TEXT),
        text="It was founded by two engineers.", answers=False, score=0.1)
    judgement = Judgement(question=QuestionAnalysis(wh="where", expected=("GPE",)),
                          sentences=(answer, other), threshold=0.5, check=0.3, model="test")
    return ctx.model_copy(update={"judgement": judgement})


def _review(text, quote):
    ctx = _ctx()
    d = Draft(sentences=(DraftSentence(text=text, citations=(
        DraftCitation(label="S1", quote=quote),)),), generator="t", prompt_version="t")
    return review_answers(gate(d, ctx, "kb"), ctx)


def test_sentence_citing_the_answering_quote_passes():
    assert _review("The company is based in Lyon.",
                   "The company is headquartered in Lyon.") is None


def test_sentence_whose_quote_does_not_answer_is_refused():
    feedback = _review("Two engineers founded it.", "It was founded by two engineers.")
    assert feedback is not None and feedback.reasons == ("non_answering_quote",)


def test_a_model_may_cite_a_quote_between_the_check_and_the_threshold():
    # The model decided to answer; the judgement only refuses quotes below its check.
    ctx = _ctx()
    j = ctx.judgement
    loose = j.model_copy(update={"sentences": (j.sentences[0], j.sentences[1].model_copy(
        update={"score": 0.35}))})
    ctx = ctx.model_copy(update={"judgement": loose})
    d = Draft(sentences=(DraftSentence(text="Two engineers founded it.", citations=(
        DraftCitation(label="S1", quote="It was founded by two engineers."),)),),
        generator="t", prompt_version="t")
    assert review_answers(gate(d, ctx, "kb"), ctx) is None


def test_sentence_stating_another_answer_than_its_quote_is_refused():
    feedback = _review("The company is headquartered in Turin.",
                       "The company is headquartered in Lyon.")
    assert feedback is not None and feedback.reasons == ("contradicts_quote",)
    assert "another answer" in feedback.problems[0]
