"""The judgement stage: features of focus agreement, answer types and form; the decision."""

import json

import pytest

from citadel.answering.judgement import (
    FEATURES,
    Judge,
    WeightsError,
    best_span,
    for_trace,
    load_weights,
)
from citadel.text.terms import stem
from tests.helpers_kb import chunk, context


@pytest.fixture(scope="module")
def judge():
    return Judge()


def features(judge, question, *texts):
    ctx = context(*(chunk(f"doc{i}#1", t) for i, t in enumerate(texts)))
    _, candidates, analysed = judge.candidates(question, ctx)
    assert analysed == len(texts)  # hand-built chunks carry no stored analysis
    return [(c.block.chunk.content[c.sentence.start:c.sentence.end],
             dict(zip(FEATURES, c.values, strict=True)), c) for c in candidates]


def one(judge, question, text):
    (found,) = features(judge, question, text)
    return found[1], found[2]


def test_matching_sentence_covers_the_focus_and_holds_the_answer_type(judge):
    f, c = one(judge, "In what year did the Normans conquer England?",
               "The Normans conquered England in 1066.")
    assert f["cover"] == 1.0 and f["type_match"] == 1.0
    assert c.span is not None and c.block.chunk.content[c.span.start:c.span.end] == "1066"


def test_changed_year_is_a_focus_mismatch(judge):
    f, c = one(judge, "What did the Normans build in 1070?",
               "The Normans built a castle in 1066.")
    assert f["entity_missing_sentence"] == 1.0 and f["number_conflict"] == 1.0
    assert any("1070" in r for r in c.reasons)


def test_changed_entity_is_a_focus_mismatch(judge):
    f, _ = one(judge, "Where did Rollo's army land?", "William's army landed at Pevensey.")
    assert f["entity_missing_sentence"] >= 1.0
    assert f["missing_rare_sentence"] > 0.5


def test_negation_mismatch(judge):
    f, c = one(judge, "Which king never swore fealty to Rollo?",
               "King Charles swore fealty to Rollo.")
    assert f["negation_mismatch"] == 1.0 and "negation differs" in c.reasons


def test_antonym_is_a_mismatch(judge):
    f, _ = one(judge, "When did oil prices decrease?", "Oil prices increased in 1973.")
    assert f["antonym"] == 1.0


def test_interrogative_sentence_never_answers_even_at_threshold_zero():
    judge = Judge(threshold=0.0)
    ctx = context(chunk("faq#1", "When do refunds arrive? Refunds arrive within 5 days."))
    judgement = judge.judge("When do refunds arrive?", ctx)
    by_text = {s.text: s for s in judgement.sentences}
    assert not by_text["When do refunds arrive?"].answers
    assert by_text["Refunds arrive within 5 days."].answers


def test_span_excludes_words_of_the_question(judge):
    (_, _, c), = features(judge, "Who succeeded Rollo as leader?",
                          "Rollo was succeeded by William Longsword as leader.")
    assert c.span is not None
    assert c.block.chunk.content[c.span.start:c.span.end] == "William Longsword"


def test_no_span_for_a_question_without_a_type(judge):
    q = judge.analyse_question("Why did the Normans leave?")
    (_, _, c), = features(judge, "Why did the Normans leave?", "The Normans left in 1100.")
    assert q.expected == () and c.span is None
    assert best_span(q, c.sentence, [stem(t) for t in c.sentence.terms], "", set())[0] is None


def test_trace_keeps_the_best_sentences_and_every_answering_one():
    judge = Judge(threshold=0.0)
    text = " ".join(f"Refunds take {n} days in region {n}." for n in range(10))
    judgement = judge.judge("How long do refunds take?", context(chunk("r#1", text)))
    kept = for_trace(judgement)
    assert len(kept.sentences) == len(judgement.answering) == 10
    assert kept.sentences == judgement.sentences


def test_shipped_weights_fit_the_features_and_set_the_default_threshold():
    from citadel.config import Settings

    weights = load_weights()
    assert weights.features == FEATURES
    assert Settings().support_threshold is None  # None: the weights' own threshold
    assert Judge(weights=weights).threshold == weights.threshold
    assert 0.0 < weights.floor < weights.threshold and 0.0 < weights.check < weights.threshold


def test_weights_for_other_features_are_refused(tmp_path):
    data = load_weights().model_dump(mode="json")
    data["features"] = data["features"][:-1]
    path = tmp_path / "w.json"
    path.write_text(json.dumps(data))
    with pytest.raises(WeightsError, match="retrain"):
        load_weights(path)
    path.write_text("{")
    with pytest.raises(WeightsError, match="malformed"):
        load_weights(path)
