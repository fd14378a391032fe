"""Comparable facts: values, their kinds and units, what they quantify, and agreement."""

import pytest

from citadel.answering.facts import agree, comparable, extract_facts


def only(sentence: str, kind: str):
    facts = [f for f in extract_facts(sentence) if f.kind == kind]
    assert len(facts) == 1, facts
    return facts[0]


@pytest.mark.parametrize(("sentence", "text", "low", "high"), [
    ("Returns are accepted within 30 days of delivery.", "within 30 days", 30, 30),
    ("Refunds take about a day in my experience.", "about a day", 1, 1),
    ("UK standard delivery takes 3–5 business days.", "3–5 business days", 3, 5),
    ("Gift cards are valid for 24 months from purchase.", "24 months", 730.5, 730.5),
    ("E-gift cards are emailed within 1 hour of purchase.", "within 1 hour", 1 / 24, 1 / 24),
    ("UK express delivery arrives the next business day.", "next business day", 1, 1),
])
def test_durations_are_read_in_days(sentence, text, low, high):
    f = only(sentence, "duration")
    assert (f.text, f.reading.low, f.reading.high) == (text, pytest.approx(low),
                                                        pytest.approx(high))


def test_money_keeps_its_currency_and_never_compares_across_currencies():
    gbp = only("UK express delivery costs £9.95.", "money")
    eur = only("EU delivery costs €9.95.", "money")
    assert (gbp.unit, gbp.reading.low, eur.unit) == ("gbp", 9.95, "eur")
    assert not comparable(gbp, eur)


def test_dates_in_three_spellings_agree():
    a = only("The offer ends on 31 January 2027.", "date")
    b = only("The offer ends on January 31, 2027.", "date")
    c = only("The offer ends on 2027-01-31.", "date")
    d = only("The offer ends on 15 January 2027.", "date")
    assert a.reading.dates == b.reading.dates == c.reading.dates == ((2027, 1, 31),)
    assert agree(a, b) and agree(a, c) and not agree(a, d)


def test_a_place_is_the_city_not_the_brand_before_the_facility():
    leeds = only("All returns are sent to the Northwind Outfitters warehouse in Leeds, United "
                 "Kingdom.", "place")
    rotterdam = only("Please send all returns to our Rotterdam warehouse.", "place")
    assert (leeds.text, leeds.unit, rotterdam.text) == ("Leeds", "warehouse", "Rotterdam")
    assert comparable(leeds, rotterdam) and not agree(leeds, rotterdam)


def test_subject_holds_what_the_value_quantifies_and_scope_the_narrowing_names():
    f = only("Delivery to Norway, Switzerland and Iceland takes 5–10 business days.", "duration")
    assert {"delivery", "norway"} <= f.subject
    assert f.scope == {"norway", "switzerland", "iceland"}
    assert only("UK standard delivery takes 3–5 business days.", "duration").scope == {"uk"}
    assert only("Returns are accepted within 30 days.", "duration").scope == set()


def test_ranges_that_overlap_agree_and_close_numbers_agree():
    assert agree(only("It takes 5–8 days.", "duration"), only("It takes 7 days.", "duration"))
    assert agree(only("Valid for 24 months.", "duration"), only("Valid for 2 years.", "duration"))
    assert not agree(only("Within 30 days.", "duration"), only("Within 90 days.", "duration"))


def test_the_word_before_a_value_is_recorded():
    facts = extract_facts("Items delivered between 1 November 2026 and 24 December 2026 can "
                          "be returned until 31 January 2027.")
    assert [f.lead for f in facts] == ["between", "and", "until"]


def test_a_number_is_a_fact_only_as_a_count_of_its_noun():
    digits = only("You can hold 3 gift cards at once.", "count")
    words = only("You can hold three gift cards at once.", "count")
    assert (digits.unit, digits.text, words.text) == ("gift", "3 gift", "three gift")
    assert agree(digits, words)
    assert extract_facts("Call us on 0800 123 456.") == []


def test_new_kinds_of_value_are_facts_too():
    assert only("The desk is open 9am to 5pm.", "hours").text == "9am to 5pm"
    assert only("The desk is open Monday to Friday.", "weekdays").text == "Monday to Friday"
    assert only("The depot is five kilometres away.", "quantity").unit == "m"
