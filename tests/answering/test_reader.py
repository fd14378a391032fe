"""The shipped evidence reader: the artifact is the one its model card describes, it loads
with onnxruntime alone, and it orders fixed (question, sentence) pairs as a reader must."""

import json

import pytest

from citadel.answering.reader import (
    CARD_FILE,
    MODEL_FILE,
    Reader,
    ReaderUnavailable,
    default_model_dir,
    file_sha256,
)


@pytest.fixture(scope="module")
def reader():
    r = Reader()
    r.load()
    return r


def test_shipped_model_matches_the_sha256_of_its_model_card():
    folder = default_model_dir()
    card = json.loads((folder / CARD_FILE).read_text("utf-8"))
    assert file_sha256(folder / MODEL_FILE) == card["sha256"]
    assert (folder / MODEL_FILE).stat().st_size == card["bytes"]
    assert (folder / "MODEL_CARD.md").read_text("utf-8").count(card["sha256"]) == 1


def test_the_sentence_that_answers_scores_above_the_ones_that_do_not(reader):
    q = "In what year did the Normans conquer England?"
    answer, off_topic = reader.score(q, [
        ("History", "The Normans conquered England in 1066."),
        ("Castles", "Norman castles were built of timber at first and later of stone."),
    ])
    assert answer.probability > off_topic.probability


def test_a_changed_fact_in_the_question_lowers_the_score(reader):
    sentence = [("History", "The Normans conquered England in 1066.")]
    asked = reader.score("In what year did the Normans conquer England?", sentence)[0]
    changed = reader.score("In what year did the Normans conquer Ireland?", sentence)[0]
    assert asked.probability > changed.probability


def test_support_questions_rank_the_policy_sentence_first(reader):
    q = "How long do I have to return an item?"
    scores = reader.score(q, [
        ("Gift cards", "Gift cards are valid for 12 months from the date of purchase."),
        ("Returns", "You can return most items within 30 days of delivery for a refund."),
        ("Shipping", "UK express delivery costs £9.95 and arrives the next working day."),
    ])
    assert max(range(3), key=lambda k: scores[k].probability) == 1


def test_the_span_marks_the_answer_words_inside_the_sentence(reader):
    sentence = "The Normans conquered England in 1066."
    score = reader.score("In what year did the Normans conquer England?",
                         [("History", sentence)])[0]
    assert score.span is not None
    start, end = score.span
    assert sentence[start:end] == "1066"


def test_no_passages_costs_nothing(reader):
    assert reader.score("anything?", []) == []


def test_a_missing_model_says_how_to_get_one(tmp_path):
    with pytest.raises(ReaderUnavailable, match="make train-reader"):
        Reader(tmp_path).score("q?", [("t", "s.")])


def test_a_corrupted_model_is_refused(tmp_path):
    folder = default_model_dir()
    for name in (MODEL_FILE, "tokenizer.json", CARD_FILE):
        (tmp_path / name).write_bytes((folder / name).read_bytes())
    with (tmp_path / MODEL_FILE).open("r+b") as f:
        f.seek(1000)
        byte = f.read(1)
        f.seek(1000)
        f.write(bytes([byte[0] ^ 0xFF]))  # flip one byte
    with pytest.raises(ReaderUnavailable, match="corrupted"):
        Reader(tmp_path).score("q?", [("t", "s.")])


def test_a_question_longer_than_the_window_is_read_not_refused(reader):
    # Questions up to max_question_chars (2,000 characters) reach the reader; a claim scored
    # for citation precision can be as long.
    long_question = "In what year did the Normans conquer England " + "and why " * 200 + "?"
    (score,) = reader.score(long_question, [("History", "The Normans conquered England in 1066.")])
    assert 0.0 <= score.probability <= 1.0
