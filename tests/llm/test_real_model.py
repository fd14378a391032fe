"""Three questions through a real language model (`make test-llm`; skipped otherwise).

The model (Qwen2.5-Coder-1.5B-Instruct by default, CITADEL_TEST_LLM_MODEL to change) runs
in this process through llama.cpp (generator = local). Whatever it writes, every citation
shown must resolve to a retrieved chunk whose document holds the quote at its offsets, a
question the knowledge base does not answer must abstain, and no sentence saying "I don't
have enough information" may be shown as a grounded answer, in answer() and in stream().
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from citadel.answering.generators.structured_output import is_no_answer
from citadel.config import Settings
from citadel.engine import Engine

pytestmark = [
    pytest.mark.llm,
    pytest.mark.skipif(not os.environ.get("CITADEL_TEST_LLM"),
                       reason="real-model test: run `make test-llm`"),
]

QUESTIONS = ("How much does UK express delivery cost?", "How long are gift cards valid?")
UNANSWERABLE = "What is the capital of France?"


@pytest.fixture(scope="module")
def engine(minilm_home: Path):
    settings = Settings(home=minilm_home, generator="local", llm_timeout=600,
                        llm_local_model=os.environ.get("CITADEL_TEST_LLM_MODEL",
                                                       "qwen2.5-coder-1.5b"),
                        llm_prompt="grounded-v2", llm_retry_prompt="grounded-strict-v2",
                        llm_stream_prompt="grounded-stream-v2", log_requests=False)
    engine = Engine.open(settings)
    yield engine
    engine.close()


def assert_integrity(engine: Engine, answer) -> None:
    for c in answer.citations:
        assert c.chunk_id in answer.trace.retrieved
        assert c.snapshot_id == engine.index.snapshot_id
        doc = engine.index.get_document(c.document_id)
        assert " ".join(doc.text[c.start : c.end].split()) == " ".join(c.quote.split())
    if answer.grounded:
        assert answer.citations and not is_no_answer(answer.answer)


def streamed(engine: Engine, question: str):
    events = list(engine.stream(question))
    done = events[-1]
    assert done.type == "done"
    return done.answer


@pytest.mark.parametrize("mode", ["answer", "stream"])
def test_real_model_answers_keep_integrity_and_release_no_refusal(engine, mode):
    ask = engine.answer if mode == "answer" else (lambda q: streamed(engine, q))
    answers = [ask(q) for q in QUESTIONS]
    for answer in answers:
        assert_integrity(engine, answer)
    assert any(a.grounded for a in answers), [a.answer for a in answers]


def test_real_model_abstains_where_the_knowledge_base_has_no_answer(engine):
    answer = engine.answer(UNANSWERABLE)
    assert answer.abstained and not answer.citations
