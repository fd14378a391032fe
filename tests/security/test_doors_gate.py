"""The gate's invariant through the doors: whatever a model writes, a citation that leaves
through the chat-completions endpoint (annotations and the `citadel` record) or MCP is one the
gate built for this request, its quote at its offsets, its marker in the content."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citadel.answering.generators.base import Generator
from citadel.engine import Engine
from citadel.records import Context, Draft, DraftCitation, DraftSentence
from citadel.server import create_app
from tests.doors import ACME_KEY, ANSWERED
from tests.security.test_markers import PSEUDO, forged_parts

_WORDS = st.sampled_from(["Returns ", "are ", "accepted ", "within ", "30 ", "90 ", "days ",
                          "[S1] ", "[S9] ", "[S2, S7] ", "[ ", "] ", "(S1) ", *PSEUDO])
_TEXT = st.lists(_WORDS, min_size=1, max_size=12).map("".join)
_BRACKETS = re.compile(r"\[[^\]]*\]")


class Hostile(Generator):
    """A 'model' whose drafts hypothesis writes: real and invented labels, quotes cut from the
    context, changed, or made up, and pseudo-citations in the text."""

    name = "hostile"
    prompt_version = "test"
    decides = True

    def __init__(self) -> None:
        self.data = None
        self.contexts: list[Context] = []

    def generate(self, question, context, feedback=None) -> Draft:
        self.contexts.append(context)
        draw = self.data.draw
        blocks = context.blocks

        def quote() -> str:
            kind = draw(st.sampled_from(["cut", "changed", "invented"]))
            if kind == "invented" or not blocks:
                return draw(_TEXT)
            content = draw(st.sampled_from(blocks)).chunk.content
            a = draw(st.integers(0, max(0, len(content) - 5)))
            cut = content[a:a + draw(st.integers(5, 80))]
            return cut if kind == "cut" else cut.replace("0", "1").replace("3", "9")

        labels = st.sampled_from([b.label for b in blocks] + ["S9", "S0", "s1", "S1 "])
        return Draft(sentences=tuple(
            DraftSentence(text=draw(_TEXT), citations=tuple(
                DraftCitation(label=draw(labels), quote=quote())
                for _ in range(draw(st.integers(0, 3)))))
            for _ in range(draw(st.integers(1, 4)))), generator=self.name,
            prompt_version=self.prompt_version)


# The model is asked for the first; the second is answered from its conflict (no model).
QUESTIONS = ("When are refunds issued to the original payment method?", ANSWERED)


@pytest.fixture(scope="module")
def hostile(doors_engine):
    generator = Hostile()
    engine = Engine(doors_engine.settings, doors_engine.index, doors_engine.embedder, generator)
    # Retrieval is deterministic: each question's context labels, as the request will see them.
    labels = {q: doors_engine.answer(q, tenant="acme").trace.context_labels for q in QUESTIONS}
    with TestClient(create_app(engine), base_url="http://localhost") as http:
        yield generator, engine, http, labels


@settings(max_examples=60, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.data(), st.booleans(), st.sampled_from(QUESTIONS))
def test_any_model_output_leaves_the_chat_door_with_gated_citations_only(hostile, data, stream,
                                                                          question):
    generator, engine, http, context_labels = hostile
    generator.data = data
    generator.contexts.clear()
    body = {"model": "citadel", "messages": [{"role": "user", "content": question}],
            "stream": stream}
    response = http.post("/v1/chat/completions", json=body,
                         headers={"Authorization": f"Bearer {ACME_KEY}"})
    assert response.status_code == 200
    if stream:
        import json

        chunks = [json.loads(line[6:]) for line in response.text.splitlines()
                  if line.startswith("data: {")]
        content = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks)
        final = chunks[-1]
        notes, record = final["choices"][0]["delta"]["annotations"], final["citadel"]
    else:
        reply = response.json()
        content = reply["choices"][0]["message"]["content"]
        notes, record = reply["choices"][0]["message"]["annotations"], reply["citadel"]
    assert content == record["answer"]
    labels = context_labels[question]
    assert all(c.labels == labels for c in generator.contexts)
    for c in record["citations"]:
        assert labels.get(c["label"]) == c["chunk_id"], "cited a chunk not given for this label"
        document = engine.index.get_document(c["document_id"])
        assert document.text[c["start"]:c["end"]] == c["quote"]
    cited = {c["label"] for c in record["citations"]}
    assert {m[1:-1] for m in _BRACKETS.findall(content)} <= cited
    assert forged_parts(content, cited) == []
    urls = {c["url"] for c in record["citations"]}
    for note in notes:
        cite = note["url_citation"]
        assert cite["url"] in urls
        assert content[cite["start_index"]:cite["end_index"]] == f"[{cite['label']}]"
    assert len(notes) == len(record["citations"])


@settings(max_examples=5, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture])
@given(st.data())
def test_the_model_is_asked_for_the_first_question(hostile, data):
    """Else the property above could hold without ever meeting a hostile draft."""
    generator, _, http, _ = hostile
    generator.data = data
    generator.contexts.clear()
    http.post("/v1/chat/completions", headers={"Authorization": f"Bearer {ACME_KEY}"},
              json={"model": "citadel", "messages": [{"role": "user", "content": QUESTIONS[0]}]})
    assert generator.contexts
