"""The judgement stage end to end, through the engine, on small knowledge bases."""

import pytest

from citadel.engine import Engine
from citadel.ingest.pipeline import ingest
from citadel.retrieval.embedders.hashing import HashingEmbedder
from citadel.text.analysis import Analyser
from tests.conftest import hashing_settings

DOCS = {
    "acme-about.md": "# About Acme\n\nAcme Corporation is headquartered in Lyon. The company "
                     "makes bicycles and employs 300 people.\n",
    "acme-profile.md": "# Acme profile\n\nAcme Corporation is headquartered in Turin. The "
                       "company makes bicycles and employs 300 people.\n",
    "history.md": "# History\n\nThe Normans conquered England in 1066. Their leader was "
                  "William the Conqueror, who was crowned king in London.\n",
    "castles.md": "# Castles\n\nNorman castles were built of timber at first and later of "
                  "stone. Many castles in England date from the Norman period.\n",
}


@pytest.fixture(scope="module")
def analyser():
    return Analyser()


def engine_for(tmp_path, analyser, names):
    kb = tmp_path / "kb"
    kb.mkdir()
    for name in names:
        (kb / name).write_text(DOCS[name])
    settings = hashing_settings(tmp_path / "home")
    ingest([kb], settings, embedder=HashingEmbedder(), analyser=analyser, progress=False)
    return Engine.open(settings, embedder=HashingEmbedder())


def test_extractive_answer_carries_its_span(tmp_path, analyser):
    engine = engine_for(tmp_path, analyser, ["history.md", "castles.md"])
    try:
        answer = engine.answer("In what year did the Normans conquer England?")
    finally:
        engine.close()
    assert not answer.abstained and "1066" in answer.answer
    assert answer.span is not None and answer.span.text == "1066"
    doc = DOCS["history.md"]
    assert doc[answer.span.start:answer.span.end] == "1066"
    cited = next(c for c in answer.citations if c.chunk_id == answer.span.chunk_id)
    assert cited.start <= answer.span.start < answer.span.end <= cited.end
    judgement = answer.trace.judgement
    assert judgement is not None and judgement.answering
    assert "judge" in answer.trace.latencies_ms


def test_unanswerable_question_with_topical_evidence_abstains_and_lists_sources(
        tmp_path, analyser):
    engine = engine_for(tmp_path, analyser, ["history.md", "castles.md"])
    try:
        answer = engine.answer("In what year did the Normans conquer Ireland?")
    finally:
        engine.close()
    assert answer.abstained and not answer.citations and answer.span is None
    assert {s.chunk_id.split("#")[0] for s in answer.sources_consulted} >= {"history"}
    assert answer.trace.generation_skipped
    assert answer.missing and answer.next_step


def test_swapped_entity_pair_is_flagged_with_both_sides_cited(tmp_path, analyser):
    engine = engine_for(tmp_path, analyser, ["acme-about.md", "acme-profile.md",
                                             "history.md"])
    try:
        answer = engine.answer("Where is Acme Corporation headquartered?")
    finally:
        engine.close()
    assert answer.conflict is not None and answer.conflict.resolution == "flagged"
    assert set(answer.conflict.values) == {"Lyon", "Turin"}
    assert {c.document_id for c in answer.citations} == {"acme-about", "acme-profile"}
    assert "Lyon" in answer.answer and "Turin" in answer.answer


class Scripted:
    """A model stand-in: answers with a fixed sentence and quote, and records its calls."""

    name = "scripted"
    prompt_version = "scripted-v1"
    max_attempts = 2
    streams_sentences = False

    def __init__(self, text, quote):
        self.text, self.quote = text, quote
        self.calls = []

    def generate(self, question, context, feedback=None):
        from citadel.records import Draft, DraftCitation, DraftSentence

        self.calls.append(feedback)
        label = next(b.label for b in context.blocks if self.quote in b.chunk.content)
        return Draft(sentences=(DraftSentence(text=self.text, citations=(
            DraftCitation(label=label, quote=self.quote),)),), generator=self.name,
            prompt_version=self.prompt_version)

    def review(self, draft, result):
        return None


def test_no_model_call_when_no_sentence_answers(tmp_path, analyser):
    base = engine_for(tmp_path, analyser, ["history.md", "castles.md"])
    model = Scripted("The Normans conquered Ireland.", "The Normans conquered England")
    engine = Engine(base.settings, base.index, base.embedder, model, judge=base.judge)
    try:
        answer = engine.answer("In what year did the Normans conquer Ireland?")
    finally:
        engine.close()
    assert answer.abstained and model.calls == []
    assert answer.trace.generation_skipped == "no context sentence answers the question"


def test_model_sentence_citing_a_non_answering_quote_is_refused_and_retried(
        tmp_path, analyser):
    base = engine_for(tmp_path, analyser, ["history.md", "castles.md"])
    model = Scripted("Castles were built of timber in 1066.",
                     "Norman castles were built of timber at first and later of stone.")
    engine = Engine(base.settings, base.index, base.embedder, model, judge=base.judge)
    try:
        answer = engine.answer("In what year did the Normans conquer England?")
    finally:
        engine.close()
    assert answer.abstained and len(model.calls) == 2
    assert model.calls[1] is not None and "non_answering_quote" in model.calls[1].reasons
    assert answer.trace.attempts[0].problem == "non_answering_quote"
