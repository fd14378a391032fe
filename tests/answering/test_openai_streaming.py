"""The generator's streamed answers: inline `[S1: "quote"]` markers read sentence by sentence
from a real SSE stream, whatever the chunking; the gate verifies each sentence."""

from __future__ import annotations

import threading

import pytest

from citadel.answering.generators import get_generator
from citadel.answering.generators.inline_markers import SentenceStream
from citadel.config import Settings
from citadel.gate import gate
from citadel.records import Draft, DraftSentence, RetryFeedback
from tests.llm_server import Reply, ScriptedLLM, Seen, answer_json

QUESTION = "How much does UK express delivery cost?"
FACT = "UK express delivery costs £9.95"
SECOND = "UK standard delivery takes 3–5 business days"


@pytest.fixture(scope="module")
def llm():
    with ScriptedLLM() as server:
        yield server


@pytest.fixture(scope="module")
def context(hashing_engine):
    from citadel.answering.context import build_context

    ranked = hashing_engine.retrieve(QUESTION, None, None, None)
    return build_context(ranked, 4, authority_weight=0.3, max_per_document=2)


def generator(llm, model):
    return get_generator(Settings(generator="openai", llm_base_url=llm.base_url,
                                  llm_model=model, llm_backoff=0.01))


def two_sentences(req: Seen) -> str:
    a, b = req.label_of(FACT), req.label_of(SECOND)
    return (f'Express delivery costs £9.95 [{a}: "{FACT}"]. '
            f'Standard delivery takes 3–5 business days. [{b}: "{SECOND}"]')


def run(gen, context, feedback=None):
    items = list(gen.stream_draft(QUESTION, context, feedback))
    *sentences, draft = items
    assert all(isinstance(s, DraftSentence) for s in sentences) and isinstance(draft, Draft)
    return sentences, draft


@pytest.mark.parametrize("chunking", [1, 2, 5, "marker-split"])
def test_streamed_markers_split_across_chunks_are_read_whole(llm, context, chunking):
    model = f"s-split-{chunking}"
    if chunking == "marker-split":  # `[S`, `1: "UK exp`, `ress ...` as separate events
        def chunks(text):
            cut = [i for i, ch in enumerate(text) if ch in '[:"]'] + [len(text)]
            out, start = [], 0
            for i in cut:
                out.append(text[start : i + 1])
                start = i + 1
            return [c for c in out if c]
        llm.script(model, Reply(two_sentences, chunks=chunks))
    else:
        llm.script(model, Reply(two_sentences, chunk_size=chunking))
    sentences, draft = run(generator(llm, model), context)
    label = {f: next(b.label for b in context.blocks if f in b.chunk.content)
             for f in (FACT, SECOND)}
    assert [[(c.label, c.quote) for c in s.citations] for s in sentences] == [
        [(label[FACT], FACT)], [(label[SECOND], SECOND)]]
    result = gate(draft, context, "kb")
    assert [c.quote for c in result.citations] == [FACT, SECOND]
    assert llm.requests[model][0].body["stream"] is True
    assert "response_format" not in llm.requests[model][0].body


def test_a_sentence_is_yielded_before_the_stream_ends(llm, context):
    release = threading.Event()
    llm.script("s-early", Reply(two_sentences, chunk_size=4, hold_after=40, release=release))
    items = generator(llm, "s-early").stream_draft(QUESTION, context)
    try:
        first = next(items)  # the server is holding the rest of the stream back
        assert isinstance(first, DraftSentence) and first.citations[0].quote == FACT
        assert not release.is_set()
    finally:
        release.set()
    rest = list(items)
    assert len(rest) == 2 and isinstance(rest[-1], Draft)


def test_stream_prompt_is_versioned_and_names_the_problems_on_retry(llm, context):
    llm.script("s-retry", Reply(two_sentences))
    gen = generator(llm, "s-retry")
    _, draft = run(gen, context, RetryFeedback(reasons=("uncited_sentence",),
                                               problems=("The sentence X has no citation.",)))
    assert draft.prompt_version == "grounded-stream-v2"
    user = llm.requests["s-retry"][0].user
    assert "The sentence X has no citation." in user and "{{" not in user


def test_json_in_stream_mode_is_still_read(llm, context):
    llm.script("s-json", Reply(lambda req: answer_json(f"{FACT} [{req.label_of(FACT)}].",
                                                      [(req.label_of(FACT), FACT)])))
    _, draft = run(generator(llm, "s-json"), context)
    assert [c.quote for s in draft.sentences for c in s.citations] == [FACT]


def test_not_enough_information_streams_as_an_abstention(llm, context):
    llm.script("s-abstain", Reply("I don't have enough information to answer that."))
    sentences, draft = run(generator(llm, "s-abstain"), context)
    assert draft.abstain and all(not s.citations for s in sentences)


def test_sentence_stream_never_splits_inside_a_marker():
    text = 'It is so [S1: "Returns are accepted. Items must be unworn."]. Next one [S2].'
    stream = SentenceStream()
    out = [s for ch in text for s in stream.feed(ch)] + stream.close()
    assert out == ['It is so [S1: "Returns are accepted. Items must be unworn."].',
                   "Next one [S2]."]
