from hypothesis import given, settings
from hypothesis import strategies as st

from citadel.answering.context import build_context
from citadel.answering.generators.extractive import ExtractiveGenerator, display_text
from tests.answering.test_context import rc


def test_generator_only_emits_labels_from_its_context(hashing_engine):
    for q in ["How long do I have to return an item?", "How much is Northwind Plus?",
              "Can I change my order?", "What is the capital of France?"]:
        ranked = hashing_engine.retrieve(q, None, None, None)
        ctx = build_context(ranked, 4)
        draft = hashing_engine.generator.generate(q, ctx)
        for s in draft.sentences:
            for c in s.citations:
                assert ctx.get(c.label) is not None


# One generator for every example: its judge loads the language model once.
ANSWER_ANYTHING = ExtractiveGenerator(support_threshold=0.0)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=80))
def test_generator_labels_are_always_in_context_for_any_question(question):
    ctx = build_context([rc("a#1", "Returns are accepted within 30 days of delivery.", 0.9, 1),
                         rc("b#1", "Gift cards are valid for 24 months from purchase.", 0.5, 2)])
    draft = ANSWER_ANYTHING.generate(question, ctx)
    assert all(c.label in {"S1", "S2"} for s in draft.sentences for c in s.citations)


def test_generator_quotes_exact_sentences():
    ctx = build_context([rc("a#1", "- **Returns** are accepted within 30 days of delivery.", 0.9,
                            1)])
    draft = ANSWER_ANYTHING.generate("How long to return?", ctx)
    quote = draft.sentences[0].citations[0].quote
    assert quote == "Returns are accepted within 30 days of delivery."


def test_generator_abstains_below_threshold():
    ctx = build_context([rc("a#1", "Gift cards are valid for 24 months from purchase.", 0.9, 1)])
    draft = ExtractiveGenerator(support_threshold=0.6).generate("Do you sell bicycles?", ctx)
    assert draft.abstain and draft.sentences == ()


def test_display_text_strips_markdown():
    assert display_text("* **Free** returns `now`") == "Free returns now"
