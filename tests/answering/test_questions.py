"""Question analysis: the answer type a question asks for, its focus and its entities."""

import pytest

from citadel.answering.questions import analyse_question
from citadel.text.analysis import Analyser


@pytest.fixture(scope="module")
def ask():
    analyser = Analyser()
    return lambda q: analyse_question(analyser.parse(q))


@pytest.mark.parametrize(("question", "wh", "kind"), [
    ("Who was the Norse leader?", "who", "PERSON"),
    ("Where are EU orders shipped from?", "where", "GPE"),
    ("When were the Normans in Normandy?", "when", "DATE"),
    ("How many points do I need for a voucher?", "how many", "CARDINAL"),
    ("How much is next day delivery?", "how much", "MONEY"),
    ("How long does a repair take?", "how long", "DATE"),
    ("Which country is Normandy in?", "which", "GPE"),
    ("What century did the Normans gain their identity?", "what", "DATE"),
    ("Which king swore fealty to Rollo?", "which", "PERSON"),
    ("What percentage of the vote did they win?", "what", "PERCENT"),
])
def test_question_asks_for_the_type_of_its_wh_word_or_head_noun(ask, question, wh, kind):
    q = ask(question)
    assert q.wh == wh
    assert kind in q.expected


def test_how_many_days_asks_for_a_duration_as_well_as_a_count(ask):
    q = ask("How many days do I have to return an item?")
    assert {"DATE", "CARDINAL"} <= set(q.expected)


def test_why_how_and_yes_no_questions_ask_for_no_typed_span(ask):
    assert ask("Why did the oil crisis start?").expected == ()
    assert ask("How do I stop my membership?").expected == ()
    q = ask("Do you sell electric bikes?")
    assert q.wh == "yes/no" and q.expected == ()


def test_what_is_questions_accept_a_noun_phrase_or_any_entity(ask):
    q = ask("What is the capital of France?")
    assert "NOUN" in q.expected and "GPE" in q.expected


def test_focus_leaves_out_the_wh_word_and_the_answer_type(ask):
    q = ask("In what country is Normandy located?")
    assert q.head == "country"
    assert "country" not in q.focus and "what" not in q.focus
    assert "normandy" in q.focus and len(q.tags) == len(q.focus) == len(q.rarity)


def test_names_numbers_and_dates_of_the_question_must_agree(ask):
    q = ask("Which king swore fealty to Rollo in 1066?")
    assert {"rollo", "1066"} <= set(q.entities)


def test_negation_is_recorded(ask):
    assert ask("Which king never swore fealty to Rollo?").negated
    assert not ask("Which king swore fealty to Rollo?").negated


def test_rare_words_weigh_more_than_common_ones(ask):
    q = ask("Who did Rollo meet in the city?")
    rarity = dict(zip(q.focus, q.rarity, strict=True))
    assert rarity["rollo"] > rarity["city"]


@pytest.mark.parametrize("question, wh", [
    ("If I order to Germany, will I have to pay duty when the parcel arrives?", "yes/no"),
    ("I finish work at 5:30. Can I still ring you after that?", "yes/no"),
    ("When I send a return, how long does the refund take?", "how long"),
    ("When is your maintenance window?", "when"),
])
def test_the_question_word_is_the_main_clauses(ask, question, wh):
    assert ask(question).wh == wh


@pytest.mark.parametrize("question, names", [
    ("Can I pay with PayPal?", ("PayPal",)),
    ("Who founded Northwind Outfitters?", ("Northwind Outfitters",)),
    # peoples and nationalities are written in other forms ("European" for Europe)
    ("Who founded the Normans?", ()),
    # places may lie in a region the sources name ("EU member states"): left to the reader
    ("Do you ship to Spain?", ()),
    # values are compared as values, not required as names
    ("Are you open on Saturday?", ()),
    ("How much is a zirconia crown?", ()),
    # a sentence before the question tells the asker's situation, not what is asked
    ("I moved to Spain last year. How do I change my address?", ()),
    ("I'm in France: how much is standard delivery?", ()),
    # adjacent words are one name: a variant is named whole
    ("Is the down in your bags RDS certified by Northwind Outfitters?",
     ("RDS", "Northwind Outfitters")),
    ("What is the warranty on the Zephyr Pro's heating plate?", ("Zephyr Pro",)),
])
def test_names_are_the_proper_names_the_main_clause_asks_about(ask, question, names):
    assert ask(question).names == names
