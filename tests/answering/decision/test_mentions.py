"""A question naming what no retrieved source mentions is not answered from them."""

from citadel.answering.decision.mentions import unmentioned
from citadel.records import Chunk, Context, ContextBlock, RankedChunk


def context(*texts: str, title: str = "Payments") -> Context:
    blocks = []
    for i, text in enumerate(texts, 1):
        chunk = Chunk(chunk_id=f"c{i}", document_id="d", source="payments.md", title=title,
                      section="", content=text, start=0, end=len(text), content_sha256="0")
        blocks.append(ContextBlock(label=f"S{i}",
                                   ranked=RankedChunk(chunk=chunk, retrieval_score=1.0, rank=i)))
    return Context(blocks=tuple(blocks))


def test_a_name_the_sources_never_write_is_unmentioned():
    ctx = context("We accept Visa, Mastercard and American Express.")
    assert unmentioned(["PayPal"], ctx) == ["PayPal"]
    assert unmentioned(["Visa", "PayPal", "Klarna"], ctx) == ["PayPal", "Klarna"]


def test_names_match_whole_words_whatever_their_case_or_accents():
    ctx = context("Beyoncé's first album sold well.", "We ship across the EU.")
    assert unmentioned(["Beyonce", "eu"], ctx) == []
    assert unmentioned(["Bey"], ctx) == ["Bey"]  # a part of a word is not the word


def test_the_title_and_section_count_as_mentions():
    assert unmentioned(["Payments"], context("We accept cards.")) == []


def test_no_names_or_no_context_decides_nothing():
    assert unmentioned([], context("We accept cards.")) == []
    assert unmentioned(["PayPal"], Context()) == []


def test_a_name_of_two_words_needs_both():
    ctx = context("The Zephyr Kettle has a two-year warranty.")
    assert unmentioned(["Zephyr Pro"], ctx) == ["Zephyr Pro"]
    assert unmentioned(["Zephyr  Kettle"], ctx) == []


def test_a_follow_up_fragment_needs_one_of_its_words_mentioned():
    ctx = context("Our tents carry a two-year warranty.")
    assert unmentioned([], ctx, ["weather"]) == ["weather"]
    assert unmentioned([], ctx, ["tent", "weather"]) == []


def test_unmentioned_names_are_said_before_a_fragment():
    ctx = context("Our tents carry a two-year warranty.")
    assert unmentioned(["Zephyr"], ctx, ["weather"]) == ["Zephyr"]


def test_a_misspelt_long_name_an_acronym_and_most_of_a_long_name_are_mentions():
    ctx = context("Otto von Bismarck met the Scottish Parliament and the East India Company.")
    assert unmentioned(["Bismark"], ctx) == []  # a misspelling of a long word
    assert unmentioned(["SP"], ctx) == []  # spelled out
    assert unmentioned(["East India Trading Company"], ctx) == []  # 3 of its 4 words
    assert unmentioned(["Asana", "NHS", "Zephyr Pro"], ctx) == ["Asana", "NHS", "Zephyr Pro"]
