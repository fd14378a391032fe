"""The values a text states and how two compare: equal, different or incomparable."""

import pytest

from citadel.text.values import (
    compare,
    compare_texts,
    find_values,
    hedged_start,
    read_value,
    states,
    with_digits,
)
from tests.value_pairs import DIFFERENT, EQUAL, INCOMPARABLE, params

# --- the table -------------------------------------------------------------------------


def test_the_table_is_large_enough():
    assert len(EQUAL) >= 60 and len(DIFFERENT) >= 60


@pytest.mark.parametrize(("a", "b"), params(EQUAL))
def test_the_same_value_written_two_ways_is_equal(a, b):
    assert compare_texts(a, b) == compare_texts(b, a) == "equal"


@pytest.mark.parametrize(("a", "b"), params(DIFFERENT))
def test_different_values_of_one_kind_are_different(a, b):
    assert compare_texts(a, b) == compare_texts(b, a) == "different"


@pytest.mark.parametrize(("a", "b"), params(INCOMPARABLE))
def test_values_of_different_kinds_or_units_are_incomparable(a, b):
    assert compare_texts(a, b) == compare_texts(b, a) == "incomparable"


def test_a_text_that_is_no_value_is_incomparable_with_anything():
    assert compare_texts("Lyon", "Lyon") == "incomparable"
    assert compare_texts("30 days after delivery", "30 days") == "incomparable"


# --- reading -----------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "kind", "unit", "low", "high"), [
    ("£1,500", "money", "gbp", 1500, 1500),
    ("1,500 pounds", "money", "gbp", 1500, 1500),  # not "500 pounds"
    ("one hundred and fifty euros", "money", "eur", 150, 150),
    ("1.5 million", "number", "", 1_500_000, 1_500_000),
    ("five kilometres", "quantity", "m", 5000, 5000),
    ("1,900 g", "quantity", "kg", 1.9, 1.9),
    ("twenty-four months", "duration", "day", 730.5, 730.5),
    ("3–5 business days", "duration", "day", 3, 5),
    ("about a day", "duration", "day", 1, 1),
    ("5:30pm", "time", "", 17 * 60 + 30, 17 * 60 + 30),
    ("9am to 5pm", "hours", "", 9 * 60, 17 * 60),
    ("twenty per cent", "percent", "%", 20, 20),
])
def test_values_are_read_in_their_base_unit(text, kind, unit, low, high):
    v = read_value(text)
    assert (v.kind, v.unit) == (kind, unit)
    assert (v.low, v.high) == (pytest.approx(low), pytest.approx(high))


def test_dates_keep_every_reading_and_what_they_leave_out():
    assert read_value("01/04/2024").dates == ((2024, 4, 1), (2024, 1, 4))
    assert read_value("31/01/2027").dates == ((2027, 1, 31),)  # 31 is no month
    assert read_value("March 1998").dates == ((1998, 3, None),)
    assert read_value("15 March").dates == ((None, 3, 15),)
    assert read_value("in 1998").dates == ((1998, None, None),)  # a lone year


def test_weekdays_are_a_set_of_days():
    assert read_value("Mon–Fri").days == frozenset(range(5))
    assert read_value("Friday to Monday").days == {4, 5, 6, 0}  # wraps round the week
    assert read_value("Sundays").days == {6}


def test_values_are_found_in_a_sentence_at_their_offsets():
    sentence = "Refunds take two weeks; the fee is one hundred and fifty euros, or 20% off."
    found = find_values(sentence)
    assert [(v.kind, v.text) for v in found] == [
        ("duration", "two weeks"), ("money", "one hundred and fifty euros"), ("percent", "20%")]
    assert all(sentence[v.start:v.end] == v.text for v in found)


def test_a_word_is_a_number_only_in_its_own_right():
    assert with_digits("twenty-four months, one hundred and fifty euros") == (
        "24 months, 150 euros")
    assert find_values("the first of April") == []  # an ordinal is no quantity
    assert read_value("the 10th century") is None
    assert read_value("4G") is None  # abbreviations match as written: no 4 grams


def test_a_span_with_other_words_is_no_value():
    assert read_value("within 30 days") is not None
    assert read_value("from 9am to 5pm") is not None
    assert read_value("30 days after delivery") is None
    assert read_value("5 km and 8 km") is None


def test_the_hedge_before_a_value_belongs_to_it():
    sentence = "Returns are accepted within 30 days."
    start = sentence.index("30")
    assert sentence[hedged_start(sentence, start):] == "within 30 days."
    assert hedged_start("It takes 30 days.", 9) == 9


# --- comparing ---------------------------------------------------------------------------


def test_a_range_agrees_with_what_it_holds_but_hours_must_match_exactly():
    assert compare_texts("5–8 days", "7 days") == "equal"
    assert compare_texts("9am to 5pm", "9am to 6pm") == "different"


def test_calendar_lengths_match_days_within_a_day_a_month():
    assert compare_texts("31 days", "one month") == "equal"
    assert compare_texts("28 days", "one month") == "different"
    assert compare_texts("24 months", "730 days") == "equal"


def test_a_text_states_a_value_written_another_way():
    value = read_value("two weeks")
    assert states("Returns within 14 days, exchanges within 30 days.", value)
    assert not states("Returns within 30 days.", value)


def test_compare_is_about_values_not_their_wording():
    a, b = read_value("£1,500"), read_value("GBP 1500")
    assert a.text != b.text and compare(a, b) == "equal"
