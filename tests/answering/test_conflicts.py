"""The conflict check: disagreement on what was asked, and the resolution rule."""

from citadel.answering.conflicts import asked_kinds, check_conflicts, question_scope
from tests.helpers_kb import chunk, context

POLICY = chunk("refunds-policy#2", "Returns are accepted within 30 days of delivery.",
               authority=1.0, date="2026-03-01", title="Refunds and Returns Policy")
FORUM = chunk("community-forum#3", "You can return anything within 90 days, no questions asked.",
              authority=0.2, date="2026-05-10", title="Community forum")
HELP = chunk("help-returns#2", "You can return items within 21 days of delivery.",
             authority=0.8, date="2026-04-01", title="Help Centre: returns")


def test_question_cues_choose_the_kinds_of_value_asked_for():
    assert asked_kinds("How long do refunds take?") == {"duration", "date"}
    assert "money" in asked_kinds("How much does a returns label cost?")
    assert asked_kinds("Where do I send my return?") == {"place"}
    assert asked_kinds("Can I return anything within 90 days?") >= {"duration"}
    assert question_scope("How long does EU delivery to Norway take?") == {"eu", "norway"}
    assert question_scope("Can I return Christmas gifts on Monday 2 November?") == {"christmas"}


def test_low_authority_disagreement_is_answered_from_the_authoritative_source():
    conflict = check_conflicts("How long do I have to return an item?", context(FORUM, POLICY))
    assert conflict is not None and conflict.resolution == "authoritative"
    assert conflict.preferred_chunk_id == "refunds-policy#2"
    assert conflict.values == ("within 30 days", "within 90 days")
    assert conflict.chunk_ids == ("refunds-policy#2", "community-forum#3")
    assert "higher authority" in conflict.explanation


def test_close_authorities_are_flagged_with_each_side_and_which_is_newer():
    conflict = check_conflicts("How long do I have to return an item?", context(HELP, POLICY))
    assert conflict is not None and conflict.resolution == "flagged"
    assert [s.value for s in conflict.sides] == ["within 30 days", "within 21 days"]
    assert [s.label for s in conflict.sides] == ["S2", "S1"]
    assert conflict.preferred_chunk_id == "refunds-policy#2"  # higher authority and newer
    assert "“Refunds and Returns Policy” has the higher authority (1.0 vs 0.8)" in (
        conflict.explanation)
    assert "“Help Centre: returns” is newer (effective 2026-04-01)" in conflict.explanation


def test_the_authority_gap_is_configurable():
    ctx = context(FORUM, POLICY)
    assert check_conflicts("How long do I have to return an item?", ctx,
                           authority_gap=0.9).resolution == "flagged"


def test_equal_authority_and_date_prefer_neither_side():
    other = chunk("returns-faq#1", "Returns are accepted within 28 days of delivery.",
                  authority=1.0, date="2026-03-01")
    conflict = check_conflicts("How long do I have to return an item?", context(POLICY, other))
    assert conflict.resolution == "flagged" and conflict.preferred_chunk_id is None
    assert "same authority" in conflict.explanation


def test_agreeing_documents_are_no_conflict():
    same = chunk("help-returns#2", "You can return items within 30 days of delivery.",
                 authority=0.8)
    assert check_conflicts("How long do I have to return an item?", context(POLICY, same)) is None


def test_superseded_document_is_dropped_before_it_can_conflict():
    old = chunk("refunds-2023#2", "Returns are accepted within 14 days of delivery.",
                authority=0.9, date="2023-01-15")
    new = POLICY.model_copy(update={"supersedes": "refunds-2023"})
    ctx = context(old, new)
    assert [d.chunk_id for d in ctx.dropped] == ["refunds-2023#2"]
    assert check_conflicts("How long do I have to return an item?", ctx) is None


def test_values_for_different_scopes_are_not_a_conflict():
    eu = chunk("shipping#2", "EU delivery takes 5–8 business days.", authority=1.0)
    norway = chunk("international#3",
                   "Delivery to Norway, Switzerland and Iceland takes 5–10 business days.",
                   authority=0.9)
    assert check_conflicts("How long does delivery take?", context(eu, norway)) is None
    assert check_conflicts("How long does delivery to Norway take?", context(eu, norway)) is None


def test_a_document_that_states_both_values_describes_two_cases():
    shipping = chunk("shipping#2", "EU delivery takes 5–8 business days.", authority=1.0)
    both = chunk("international#3", "Delivery to EU countries takes 5–8 business days.\n"
                 "Delivery to far countries takes 10–15 business days.", authority=0.9)
    assert check_conflicts("How long does delivery take?", context(shipping, both)) is None


def test_values_for_another_part_of_the_question_are_not_compared():
    forum = chunk("forum#3", "Refunds take about a day in my experience.", authority=0.2)
    membership = chunk("subscriptions#5", "The membership fee is refunded in full if you cancel "
                       "within 14 days of joining.", authority=0.9)
    assert check_conflicts("How long do refunds take for membership fees?",
                           context(membership, forum)) is None


def test_a_value_under_an_unrelated_condition_is_not_a_side():
    invoice = chunk("billing#5", "To add a VAT number to an invoice, contact customer support "
                    "within 30 days of dispatch.", authority=0.9)
    tracking = chunk("tracking#4", "If your tracking has not updated for 5 business days, "
                     "contact customer support.", authority=0.8)
    assert check_conflicts("When is customer support open?", context(invoice, tracking)) is None


def test_dates_pair_by_the_word_before_them():
    extension = chunk("holiday-returns#2", "Items delivered between 1 November 2026 and 24 "
                      "December 2026 can be returned until 31 January 2027.", authority=1.0,
                      date="2026-10-15", section="Christmas returns")
    guide = chunk("gift-guide#4", "Gifts delivered from 1 November 2026 can be returned until "
                  "15 January 2027.", authority=0.6, date="2026-11-05",
                  section="Easy Christmas returns")
    conflict = check_conflicts("Until when can I return Christmas gifts delivered in November?",
                               context(guide, extension))
    assert conflict is not None and conflict.resolution == "flagged"
    assert set(conflict.values) == {"31 January 2027", "15 January 2027"}


def test_places_conflict_on_the_same_facility():
    leeds = chunk("refunds-policy#3", "All returns are sent to the Northwind Outfitters "
                  "warehouse in Leeds, United Kingdom.", authority=1.0, date="2026-03-01")
    rotterdam = chunk("sending-a-return#3", "Please send all returns to our Rotterdam warehouse "
                      "using the address on your label.", authority=0.7, date="2026-04-20")
    conflict = check_conflicts("Where do I send my return?", context(rotterdam, leeds))
    assert conflict is not None and conflict.values == ("Leeds", "Rotterdam")
    assert conflict.attribute == "returns (location)"


def test_flagged_chunks_never_supply_a_side():
    planted = chunk("tips#3", "You can return anything within 365 days.", authority=0.9,
                    suspicious=True)
    ctx = context(planted, POLICY)
    assert [d.reason for d in ctx.dropped] == ["suspicious"]
    assert check_conflicts("How long do I have to return an item?", ctx) is None


def test_a_question_without_facts_in_context_has_no_conflict():
    assert check_conflicts("Can I change my order?", context(POLICY, FORUM)) is None
    assert check_conflicts("?", context(POLICY, FORUM)) is None


def test_the_same_value_written_another_way_is_no_conflict():
    words = chunk("help-returns#2", "You can return items within one month of delivery.",
                  authority=1.0)
    assert check_conflicts("How long do I have to return an item?",
                           context(POLICY, words)) is None
    pounds = chunk("plans#1", "The annual service plan costs 1,500 pounds.", authority=1.0)
    symbol = chunk("pricing#1", "The annual service plan costs £1,500.", authority=1.0)
    assert check_conflicts("How much does the annual service plan cost?",
                           context(pounds, symbol)) is None


def test_opening_hours_and_days_are_asked_for_and_compared():
    assert asked_kinds("What are the support desk opening hours?") >= {"hours", "weekdays"}
    assert asked_kinds("How far is the warehouse from the station?") == {"quantity"}
    a = chunk("contact#1", "The support desk is open from 9am to 5pm, Monday to Friday.",
              authority=1.0)
    b = chunk("help#1", "The support desk is open from 09:00 to 18:00, Monday to Friday.",
              authority=1.0)
    conflict = check_conflicts("What are the support desk opening hours?", context(a, b))
    assert conflict is not None and set(conflict.values) == {"9am to 5pm", "09:00 to 18:00"}
