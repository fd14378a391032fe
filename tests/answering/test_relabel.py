"""A quote under the wrong label is pointed at the one block of this request that holds it."""

import hashlib

from citadel.answering.generators.relabel import relabel_draft
from citadel.gate import gate
from citadel.records import Draft, DraftCitation, DraftSentence
from tests.test_gate import context_of, make_chunk

OTHER = "UK express delivery costs £9.95. Standard delivery is free over £50."


def other_chunk(content: str = OTHER, cid: str = "shipping#1"):
    return make_chunk(chunk_id=cid, document_id=cid.split("#")[0], source=f"{cid[:-2]}.md",
                      content=content, start=0, end=len(content),
                      content_sha256=hashlib.sha256(content.encode()).hexdigest())


def draft_citing(label: str, quote: str) -> Draft:
    return Draft(sentences=(DraftSentence(text="Express delivery costs £9.95.",
                                          citations=(DraftCitation(label=label, quote=quote),)),),
                 generator="t", prompt_version="p")


def test_quote_in_exactly_one_other_block_gets_that_blocks_label():
    context = context_of(make_chunk(), other_chunk())
    shipping = next(b.label for b in context.blocks if b.chunk.chunk_id == "shipping#1")
    wrong = next(b.label for b in context.blocks if b.label != shipping)
    fixed = relabel_draft(draft_citing(wrong, "express delivery costs £9.95"), context)
    assert fixed.relabelled == 1
    assert fixed.sentences[0].citations[0].label == shipping
    result = gate(fixed, context, "kb")
    assert [c.chunk_id for c in result.citations] == ["shipping#1"]


def test_quote_already_in_its_block_is_left_alone():
    context = context_of(make_chunk(), other_chunk())
    d = draft_citing("S1", "Returns are accepted within 30 days")
    assert relabel_draft(d, context) is d


def test_quote_in_two_blocks_or_none_is_left_for_the_gate_to_drop():
    twin = other_chunk("Since May, UK express delivery costs £9.95 on weekdays.",
                       cid="shipping-copy#1")
    context = context_of(make_chunk(), other_chunk(), twin)
    d = draft_citing("S1", "express delivery costs £9.95")
    assert relabel_draft(d, context) is d  # ambiguous: the model must say which
    d = draft_citing("S1", "express delivery is free on Sundays")
    assert relabel_draft(d, context) is d
    assert gate(d, context, "kb").dropped[0].reason == "quote_not_found"


def test_a_label_never_handed_out_is_not_a_slip_and_stays_for_the_gate():
    context = context_of(make_chunk(), other_chunk())
    for label in ("S9", "shipping.md"):
        d = draft_citing(label, "express delivery costs £9.95")
        assert relabel_draft(d, context) is d
        assert gate(d, context, "kb").dropped[0].reason == "label_not_in_context"
