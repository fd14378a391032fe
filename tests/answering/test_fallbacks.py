"""Honest failure texts: what was not found, in the user's words."""

import pytest

from citadel.answering.fallbacks import abstention_text, conflict_next_step, describe_missing


@pytest.mark.parametrize(("question", "missing"), [
    ("How long do refunds take?", "how long refunds take"),
    ("How long do I have to return an item?", "how long you have to return an item"),
    ("What is the capital of France?", "what the capital of France is"),
    ("Can I change my order?", "whether you can change your order"),
    ("Do you sell bicycles?", "whether we sell bicycles"),
    ("How much does UK express delivery cost?", "how much UK express delivery costs"),
    ("When will my refund arrive?", "when your refund will arrive"),
    ("Is express delivery available to the EU?",
     "whether express delivery is available to the EU"),
    ("What time does support open on Saturday?", "what time support opens on Saturday"),
    ("Where is my order being delivered?", "where your order is being delivered"),
    ("Where are returns sent?", "where returns are sent"),
    ("Can you tell me how long refunds take?", "how long refunds take"),
    ("What happens if my parcel is lost?", "what happens if your parcel is lost"),
    ("Until when can I return Christmas gifts?", "until when you can return Christmas gifts"),
])
def test_questions_become_the_clause_they_ask_about(question, missing):
    assert describe_missing(question) == missing


@pytest.mark.parametrize("question", ["Did my order ship?", "How?", "refund policy",
                                      "Is there a fee?"])
def test_unknown_shapes_quote_the_question_instead_of_guessing(question):
    assert describe_missing(question) == f"an answer to “{question}”"


def test_abstention_says_what_is_missing_in_plain_words():
    assert abstention_text("How long do refunds take?") == (
        "I couldn't find how long refunds take in the knowledge base.")


def test_conflict_next_step_names_the_documents():
    step = conflict_next_step(["Refunds Policy", "Help Centre"])
    assert "customer support" in step and "“Refunds Policy”, “Help Centre”" in step
