"""Conflict answers: each side cited through the gate, never merged, resolution explained."""

from citadel.answering.conflicts import check_conflicts
from citadel.answering.decision.composing import compose, conflict_draft
from tests.helpers_kb import chunk, context

POLICY = chunk("refunds-policy#3", "All returns are sent to the Northwind Outfitters warehouse "
               "in Leeds, United Kingdom.", authority=1.0, date="2026-03-01",
               title="Refunds and Returns Policy")
HELP = chunk("sending-a-return#3", "Please send all returns to our Rotterdam warehouse using "
             "the address on your label.", authority=0.7, date="2026-04-20",
             title="Help Centre: sending a return")
FORUM = chunk("forum#3", "Send your return to our Rotterdam warehouse, it is quicker.",
              authority=0.2, date="2026-05-01", title="Community forum")
QUESTION = "Where do I send my return?"


def test_flagged_conflict_cites_each_side_with_its_own_quote():
    ctx = context(HELP, POLICY)
    conflict = check_conflicts(QUESTION, ctx)
    composed = compose(QUESTION, conflict, ctx, "kb-test")
    assert composed is not None
    by_chunk = {c.chunk_id: c for c in composed.result.citations}
    assert set(by_chunk) == {"refunds-policy#3", "sending-a-return#3"}
    assert "Leeds" in by_chunk["refunds-policy#3"].quote
    assert "Rotterdam" in by_chunk["sending-a-return#3"].quote
    assert all(c.snapshot_id == "kb-test" for c in composed.result.citations)
    # One sentence per side, each with exactly one label: never one merged claim.
    assert [len(s.labels) for s in composed.result.sentences] == [1, 1]
    assert composed.text.startswith("The sources disagree on where you send your return.")
    assert "higher authority (1.0 vs 0.7)" in composed.text and "is newer" in composed.text
    assert composed.missing and "disagree" in composed.missing
    assert "customer support" in composed.next_step


def test_authoritative_answer_cites_only_the_authoritative_side_and_notes_the_other():
    ctx = context(FORUM, POLICY)
    conflict = check_conflicts(QUESTION, ctx)
    assert conflict.resolution == "authoritative"
    composed = compose(QUESTION, conflict, ctx, "kb-test")
    assert [c.chunk_id for c in composed.result.citations] == ["refunds-policy#3"]
    assert composed.text.startswith("All returns are sent to the Northwind Outfitters warehouse")
    assert "“Community forum” (authority 0.2, effective 2026-05-01) says Rotterdam" in (
        composed.text)
    assert composed.missing is None and composed.next_step is None


def test_draft_holds_labels_and_quotes_only():
    ctx = context(HELP, POLICY)
    draft = conflict_draft(check_conflicts(QUESTION, ctx))
    assert draft.generator == "conflict" and draft.prompt_version == "conflict-v1"
    assert {c.label for s in draft.sentences for c in s.citations} == {"S1", "S2"}


def test_a_side_the_gate_rejects_sends_the_answer_back_to_the_ordinary_path():
    ctx = context(HELP, POLICY)
    conflict = check_conflicts(QUESTION, ctx)
    tampered = conflict.model_copy(update={"sides": (
        conflict.sides[0], conflict.sides[1].model_copy(update={"quote": "Returns go to Paris."}))})
    assert compose(QUESTION, tampered, ctx, "kb-test") is None
