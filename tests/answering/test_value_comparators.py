"""Every comparator of answer values gives one verdict (they all call `citadel.text.values`),
and two documents that write one value two ways are no conflict, end to end."""

import pytest

from citadel.answering.answer_norm import answers_relation
from citadel.answering.facts import agree, comparable, extract_facts
from citadel.answering.span_conflicts import spans_agree
from citadel.engine import Engine
from citadel.ingest.pipeline import ingest
from citadel.retrieval.embedders.hashing import HashingEmbedder
from citadel.text.values import compare_texts
from tests.conftest import hashing_settings
from tests.value_pairs import DIFFERENT, EQUAL, INCOMPARABLE

_NORM = {"agree": "equal", "compatible": "equal", "conflict": "different",
         "unrelated": "incomparable"}


def _facts_verdict(a: str, b: str) -> str:
    fa, fb = extract_facts(a), extract_facts(b)
    assert len(fa) <= 1 and len(fb) <= 1, (fa, fb)
    if not fa or not fb or not comparable(fa[0], fb[0]):
        return "incomparable"
    return "equal" if agree(fa[0], fb[0]) else "different"


@pytest.mark.parametrize(("a", "b", "expected"), [
    pytest.param(a, b, expected, id=f"{expected}-{name}")
    for expected, rows in (("equal", EQUAL), ("different", DIFFERENT),
                           ("incomparable", INCOMPARABLE))
    for name, a, b in rows
])
def test_every_comparator_gives_the_same_verdict(a, b, expected):
    assert compare_texts(a, b) == expected
    assert _facts_verdict(a, b) == expected                       # the conflict check
    assert _NORM[answers_relation(a, b)] == expected              # the reader's answers
    assert spans_agree(a, b) == (expected != "different")         # the tagger's spans


# --- end to end: two documents of the same authority, one question -----------------------

SAME_VALUE = [
    pytest.param("How long do I have to return an item?",
                 "Items can be returned within two weeks of delivery.",
                 "Items can be returned within 14 days of delivery.", id="weeks-days"),
    pytest.param("How far is the warehouse from the station?",
                 "The warehouse is 5 km from the station.",
                 "The warehouse is five kilometres from the station.", id="km-words"),
    pytest.param("How much does the annual service plan cost?",
                 "The annual service plan costs £1,500.",
                 "The annual service plan costs 1,500 pounds.", id="pounds"),
    pytest.param("What are the support desk opening hours?",
                 "The support desk is open from 9am to 5pm.",
                 "The support desk is open from 09:00 to 17:00.", id="hours"),
    pytest.param("How long is the warranty?",
                 "The warranty lasts 2 years from purchase.",
                 "The warranty is a 24-month warranty from purchase.", id="years-months"),
]


def _ask(tmp_path, question: str, a: str, b: str):
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "policy-a.md").write_text(f"# Policy A\n\n{a}\n")
    (kb / "policy-b.md").write_text(f"# Policy B\n\n{b}\n")
    settings = hashing_settings(tmp_path / "home")
    ingest([kb], settings, embedder=HashingEmbedder(), progress=False)
    engine = Engine.open(settings, embedder=HashingEmbedder())
    try:
        return engine.answer(question)
    finally:
        engine.close()


@pytest.mark.parametrize(("question", "a", "b"), SAME_VALUE)
def test_one_value_written_two_ways_is_answered_without_a_conflict(tmp_path, question, a, b):
    answer = _ask(tmp_path, question, a, b)
    assert answer.conflict is None
    assert not answer.abstained and "disagree" not in answer.answer


def test_a_real_disagreement_is_still_flagged(tmp_path):
    answer = _ask(tmp_path, "How much is the deposit?",
                  "The deposit for a rental bike is €150.",
                  "The deposit for a rental bike is €200.")
    assert answer.conflict is not None and answer.conflict.resolution == "flagged"
    assert set(answer.conflict.values) == {"€150", "€200"}
    assert {c.document_id for c in answer.citations} == {"policy-a", "policy-b"}
