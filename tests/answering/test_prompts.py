"""Versioned prompt files: loading, rendering, and the context they present."""

import datetime as dt
import hashlib

import pytest

from citadel.answering.context import build_context
from citadel.answering.generators.openai import render_context
from citadel.answering.prompts import PromptError, load_prompt, parse_prompt
from citadel.records import Chunk, RankedChunk


def chunk(cid: str, content: str, authority: float) -> Chunk:
    return Chunk(chunk_id=cid, document_id=cid.split("#")[0], source=f"{cid}.md", title=cid,
                 section="Eligibility", content=content, start=0, end=len(content),
                 authority=authority, effective_date=dt.date(2026, 3, 1),
                 content_sha256=hashlib.sha256(content.encode()).hexdigest())


@pytest.mark.parametrize("version", ["grounded-v1", "grounded-strict-v1", "grounded-stream-v1"])
def test_shipped_prompts_render_every_placeholder(version):
    prompt = load_prompt(version)
    assert prompt.version == version
    messages = prompt.render(labels="S1, S2", context="[S1] x\nblock", question="Q?",
                             problems="- the problem")
    text = "\n".join(m["content"] for m in messages)
    assert "{{" not in text and "<!--" not in text
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "S1, S2" in messages[0]["content"] and "Q?" in messages[1]["content"]
    if version != "grounded-v1":
        assert "- the problem" in messages[0]["content"]


def test_values_are_not_rescanned_for_placeholders():
    prompt = parse_prompt("t", "## system\nA {{question}}\n## user\n{{context}}")
    messages = prompt.render(question="{{context}}", context="C")
    assert messages[0]["content"] == "A {{context}}"


def test_unknown_or_malformed_prompts_are_refused():
    with pytest.raises(PromptError):
        load_prompt("does-not-exist-v1")
    with pytest.raises(PromptError):
        load_prompt("../config")
    with pytest.raises(PromptError):
        parse_prompt("t", "## system\nonly a system part")
    with pytest.raises(PromptError, match="value for question"):
        parse_prompt("t", "## system\n{{question}}\n## user\nu").render()


def test_context_is_labelled_highest_authority_first_without_file_names():
    ranked = [RankedChunk(chunk=chunk("forum#1", "Forum post text.", 0.2), retrieval_score=0.9,
                          rank=1),
              RankedChunk(chunk=chunk("policy#1", "Policy text here.", 1.0), retrieval_score=0.5,
                          rank=2)]
    context = build_context(ranked, 4)
    text = render_context(context)
    policy_label = next(b.label for b in context.blocks if b.chunk.chunk_id == "policy#1")
    assert text.startswith(f"[{policy_label}] policy#1 › Eligibility (effective 2026-03-01)")
    assert text.index("Policy text") < text.index("Forum post")
    assert ".md" not in text


@pytest.mark.parametrize("version", ["grounded-v2", "grounded-strict-v2", "grounded-stream-v2"])
def test_v2_prompts_keep_the_system_message_fixed_and_show_a_worked_example(version):
    prompt = load_prompt(version)
    a = prompt.render(labels="S2, S1", context="[S2] x", question="Q?", problems="- p")
    b = prompt.render(labels="S1", context="[S1] y", question="R?", problems="- q")
    assert a[0]["content"] == b[0]["content"]  # nothing per request: cacheable prefix
    assert "S2, S1" in a[1]["content"] and "Q?" in a[1]["content"]
    if version != "grounded-v2":
        assert "- p" in a[1]["content"]
    assert "<" not in prompt.system  # real example values, no <placeholders>
    assert "The museum is open from 9 am to 5 pm" in prompt.system


def test_reply_fields_order_is_read_from_the_prompt_comment():
    assert load_prompt("grounded-v1").fields == ("answer", "citations", "confidence")
    assert load_prompt("grounded-v2").fields == ("citations", "answer", "confidence")
    with pytest.raises(PromptError, match="Reply fields"):
        parse_prompt("t", "<!-- Reply fields: answer, quote -->\n## system\nA\n## user\nB")
