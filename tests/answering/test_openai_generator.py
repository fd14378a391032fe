"""The OpenAI-compatible generator end to end: Engine -> real HTTP -> scripted model -> gate.

Each test scripts what the "model" replies and asserts what the user receives.
"""

from __future__ import annotations

import logging
import re

import pytest

from citadel.answering.generators import get_generator
from citadel.answering.prompts import load_prompt
from citadel.config import Settings
from citadel.engine import Engine
from tests.llm_server import Fail, Hang, Reply, ScriptedLLM, Seen, answer_json

QUESTION = "How much does UK express delivery cost?"
FACT = "UK express delivery costs £9.95"
SECRET = "sk-test-do-not-leak-123456"


@pytest.fixture(scope="module")
def llm():
    with ScriptedLLM() as server:
        yield server


def make_engine(hashing_engine: Engine, llm: ScriptedLLM, model: str, **overrides) -> Engine:
    values = dict(home=hashing_engine.settings.home, embedder="hashing", generator="openai",
                  llm_base_url=llm.base_url, llm_model=model, llm_api_key=SECRET,
                  llm_timeout=5.0, llm_max_retries=1, llm_backoff=0.01)
    values.update(overrides)
    settings = Settings(**values)
    return Engine(settings, hashing_engine.index, hashing_engine.embedder,
                  get_generator(settings))


def correct(req: Seen) -> str:
    label = req.label_of(FACT)
    return answer_json(f"{FACT} [{label}].", [(label, FACT)])


def ask(hashing_engine, llm, model, *steps, formats=("json_schema", "json_object"),
        format_error=400, **settings):
    llm.script(model, *steps, formats=formats, format_error=format_error)
    return make_engine(hashing_engine, llm, model, **settings).answer(QUESTION)


def assert_abstained_cleanly(answer) -> None:
    assert answer.abstained and not answer.grounded
    assert answer.citations == ()
    assert "[" not in answer.answer  # no marker of any kind reaches the user
    assert answer.next_step


def drop_reasons(answer) -> list[str]:
    return [d.reason for d in answer.trace.citations_dropped]


def test_correct_answer_is_grounded_with_a_verified_citation(hashing_engine, llm):
    answer = ask(hashing_engine, llm, "m-correct", Reply(correct))
    assert answer.grounded and not answer.abstained
    (citation,) = answer.citations
    assert citation.quote == FACT
    assert citation.chunk_id in answer.trace.retrieved
    doc = hashing_engine.index.get_document(citation.document_id)
    assert doc.text[citation.start : citation.end] == FACT
    assert answer.answer == f"{FACT}. [{citation.label}]"
    t = answer.trace
    assert t.generator == "openai:m-correct" and t.prompt_version == "grounded-v2"
    assert len(t.attempts) == 1 and t.retry_reason is None and t.citations_dropped == ()
    assert t.attempts[0].citations_attempted == t.attempts[0].citations_verified == 1


def test_request_carries_labelled_context_schema_and_key(hashing_engine, llm):
    ask(hashing_engine, llm, "m-request", Reply(correct))
    (seen,) = llm.requests["m-request"]
    assert seen.headers["authorization"] == f"Bearer {SECRET}"
    assert seen.body["model"] == "m-request" and seen.body["stream"] is False
    fmt = seen.body["response_format"]
    assert fmt["type"] == "json_schema"
    labels = fmt["json_schema"]["schema"]["properties"]["citations"]["items"]["properties"]
    assert sorted(labels["id"]["enum"]) == sorted(seen.blocks)
    assert QUESTION in seen.user and FACT in seen.user
    assert ".md" not in seen.user  # blocks are labelled, their files are not named


def test_label_never_handed_to_the_model_is_dropped_then_abstains(hashing_engine, llm):
    bad = Reply(answer_json(f"{FACT} [S9].", [("S9", FACT)]))
    answer = ask(hashing_engine, llm, "m-s9", bad)
    assert_abstained_cleanly(answer)
    t = answer.trace
    assert len(t.attempts) == 2 and "uncited_sentence" in t.retry_reason.split(",")
    assert drop_reasons(answer).count("label_not_in_context") == 2
    assert [a.prompt_version for a in t.attempts] == ["grounded-v2", "grounded-strict-v2"]
    retry = llm.requests["m-s9"][1]
    assert '"S9" is not the label of a block' in retry.user


def test_filename_instead_of_label_never_reaches_the_user(hashing_engine, llm):
    bad = Reply(answer_json(f"{FACT} [Source: internal_spec_v3.pdf §4.2].",
                            [("internal_spec_v3.pdf", FACT)]))
    answer = ask(hashing_engine, llm, "m-filename", bad)
    assert_abstained_cleanly(answer)
    assert "internal_spec" not in answer.model_dump_json(exclude={"trace"})
    dropped = answer.trace.citations_dropped
    assert {d.label for d in dropped if d.reason == "label_not_in_context"} == {
        "internal_spec_v3.pdf", "Source: internal_spec_v3.pdf §4.2"}


def test_quote_not_in_the_chunk_is_dropped(hashing_engine, llm):
    def invented(req: Seen) -> str:
        label = req.label_of(FACT)
        return answer_json(f"Express delivery is free for everyone [{label}].",
                           [(label, "Express delivery is free for everyone")])

    answer = ask(hashing_engine, llm, "m-bad-quote", Reply(invented))
    assert_abstained_cleanly(answer)
    assert drop_reasons(answer).count("quote_not_found") == 2


def test_quote_with_a_changed_number_is_dropped(hashing_engine, llm):
    def changed(req: Seen) -> str:
        label = req.label_of(FACT)
        return answer_json(f"UK express delivery costs £7.95 [{label}].",
                           [(label, "UK express delivery costs £7.95")])

    answer = ask(hashing_engine, llm, "m-changed-number", Reply(changed))
    assert_abstained_cleanly(answer)
    assert "quote_not_found" in drop_reasons(answer)
    assert "7.95" not in answer.answer


def test_sentence_number_not_in_its_verified_quote_is_refused(hashing_engine, llm):
    # The quote is real, but the sentence changed the number it claims to quote.
    def misquoted(req: Seen) -> str:
        label = req.label_of(FACT)
        return answer_json(f"UK express delivery costs £7.95 [{label}].", [(label, FACT)])

    answer = ask(hashing_engine, llm, "m-number-claim", Reply(misquoted))
    assert_abstained_cleanly(answer)
    assert answer.trace.retry_reason == "unsupported_number"
    assert "7.95" in llm.requests["m-number-claim"][1].user


def test_valid_json_wrapped_in_prose_and_fences_is_parsed(hashing_engine, llm):
    def chatty(req: Seen) -> str:
        return f"Sure! Here is the answer:\n```json\n{correct(req)}\n```\nHope this helps."

    answer = ask(hashing_engine, llm, "m-prose", Reply(chatty))
    assert answer.grounded and [c.quote for c in answer.citations] == [FACT]
    assert len(answer.trace.attempts) == 1


def test_single_quoted_json_is_parsed(hashing_engine, llm):
    def python_dict(req: Seen) -> str:
        label = req.label_of(FACT)
        return (f"{{'answer': '{FACT} [{label}].', 'citations': [{{'id': '{label}', "
                f"'quote': '{FACT}'}},], 'confidence': 0.8}}")

    answer = ask(hashing_engine, llm, "m-single-quotes", Reply(python_dict))
    assert answer.grounded and [c.quote for c in answer.citations] == [FACT]


def test_broken_json_then_a_good_retry_is_grounded(hashing_engine, llm):
    broken = Reply('{"answer": "UK express delivery costs £9.95 [S1].", "citations": [{"id"')
    answer = ask(hashing_engine, llm, "m-broken-then-good", broken, Reply(correct))
    assert answer.grounded and [c.quote for c in answer.citations] == [FACT]
    t = answer.trace
    assert len(t.attempts) == 2 and t.retry_reason == "unparseable"
    assert t.prompt_version == "grounded-strict-v2" and t.attempts[1].problem is None
    assert "could not be used" in llm.requests["m-broken-then-good"][1].user


def test_broken_json_twice_abstains_without_citations(hashing_engine, llm):
    answer = ask(hashing_engine, llm, "m-broken", Reply("I think it is £9.95 [S1]"))
    assert_abstained_cleanly(answer)
    assert [a.problem for a in answer.trace.attempts] == ["unparseable", "unparseable"]


def test_marker_and_citation_list_disagreeing_is_resolved_by_the_gate(hashing_engine, llm):
    def disagree(req: Seen) -> str:
        label = req.label_of(FACT)
        other = next(lb for lb in req.blocks if lb != label)
        return answer_json(f"{FACT} [{other}].", [(label, FACT)])

    answer = ask(hashing_engine, llm, "m-disagree", Reply(disagree))
    assert answer.grounded
    (citation,) = answer.citations
    assert citation.quote == FACT and answer.answer == f"{FACT}. [{citation.label}]"
    assert drop_reasons(answer) == ["empty_quote"]  # the marker's label had no quote


def test_model_saying_it_does_not_know_abstains_without_retry(hashing_engine, llm):
    reply = Reply(answer_json("I don't have enough information to answer that.", []))
    answer = ask(hashing_engine, llm, "m-dont-know", reply)
    assert_abstained_cleanly(answer)
    assert len(answer.trace.attempts) == 1 and answer.trace.attempts[0].abstained
    assert not answer.degraded


def test_server_error_then_success_is_retried(hashing_engine, llm):
    answer = ask(hashing_engine, llm, "m-500", Fail(500), Reply(correct))
    assert answer.grounded and not answer.degraded
    assert len(llm.requests["m-500"]) == 2


def test_rate_limit_honours_retry_after(hashing_engine, llm):
    answer = ask(hashing_engine, llm, "m-429", Fail(429, retry_after="0"), Reply(correct))
    assert answer.grounded and len(llm.requests["m-429"]) == 2


def test_retry_after_beyond_the_cap_gives_up_at_once(hashing_engine, llm):
    answer = ask(hashing_engine, llm, "m-429-long", Fail(429, retry_after="3600"),
                 Reply(correct), llm_max_wait=5)
    assert_abstained_cleanly(answer)
    assert answer.degraded and "asked to wait 3600s" in answer.trace.degraded_reasons[0]
    assert len(llm.requests["m-429-long"]) == 1


def test_persistent_server_errors_degrade_to_an_abstention(hashing_engine, llm):
    answer = ask(hashing_engine, llm, "m-503", Fail(503), llm_max_retries=2)
    assert_abstained_cleanly(answer)
    assert answer.degraded and answer.trace.fallback_used
    assert "HTTP 503" in answer.trace.degraded_reasons[0]
    assert len(llm.requests["m-503"]) == 3


def test_hang_past_the_timeout_degrades_to_an_abstention(hashing_engine, llm):
    answer = ask(hashing_engine, llm, "m-hang", Hang(10), llm_timeout=0.3)
    assert_abstained_cleanly(answer)
    assert answer.degraded and "timed out" in answer.trace.degraded_reasons[0]
    assert len(llm.requests["m-hang"]) == 2  # the first try and one retry


def test_unreachable_server_degrades_to_an_abstention(hashing_engine, llm):
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    answer = ask(hashing_engine, llm, "m-unreachable", Reply(correct),
                 llm_base_url=f"http://127.0.0.1:{port}/v1")
    assert_abstained_cleanly(answer)
    assert "connection error" in answer.trace.degraded_reasons[0]


def test_rejected_key_is_not_retried_and_not_shown(hashing_engine, llm):
    answer = ask(hashing_engine, llm, "m-401", Fail(401))
    assert_abstained_cleanly(answer)
    assert "check the API key" in answer.trace.degraded_reasons[0]
    assert len(llm.requests["m-401"]) == 1


def test_server_without_json_schema_mode_falls_back(hashing_engine, llm):
    answer = ask(hashing_engine, llm, "m-no-schema", Reply(correct), formats=("json_object",))
    assert answer.grounded
    (seen,) = llm.requests["m-no-schema"]
    assert seen.body["response_format"] == {"type": "json_object"}


def test_schema_goes_in_json_object_mode_where_only_that_is_accepted(hashing_engine, llm):
    # llama-cpp-python's server refuses json_schema with an HTTP 500 naming response_format.
    answer = ask(hashing_engine, llm, "m-llamacpp", Reply(correct),
                 formats=("json_object", "json_object+schema"), format_error=500)
    assert answer.grounded
    (seen,) = llm.requests["m-llamacpp"]
    assert seen.body["response_format"]["type"] == "json_object"
    assert seen.body["response_format"]["schema"]["required"] == [
        "citations", "answer", "confidence"]  # grounded-v2 asks for the quote first


def test_server_without_any_json_mode_gets_plain_requests(hashing_engine, llm):
    answer = ask(hashing_engine, llm, "m-plain", Reply(correct), formats=())
    assert answer.grounded
    assert "response_format" not in llm.requests["m-plain"][0].body


def test_the_api_key_is_never_logged_or_shown(hashing_engine, llm, caplog):
    caplog.set_level(logging.DEBUG)
    engine = make_engine(hashing_engine, llm, "m-secret")
    llm.script("m-secret", Fail(500))
    answer = engine.answer(QUESTION)
    for text in (caplog.text, answer.model_dump_json(), repr(engine.settings),
                 repr(engine.generator), engine.settings.model_dump_json()):
        assert SECRET not in text
    assert "retrying" in caplog.text  # the retry was logged, without the key


def test_openai_api_key_is_the_fallback_for_the_key():
    s = Settings.load(env={"OPENAI_API_KEY": "k1"})
    assert s.llm_api_key.get_secret_value() == "k1"
    s = Settings.load(env={"OPENAI_API_KEY": "k1", "CITADEL_LLM_API_KEY": "k2"})
    assert s.llm_api_key.get_secret_value() == "k2"


def test_llm_settings_come_from_the_config_file(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('generator = "openai"\nllm_model = "m"\nllm_base_url = '
                      '"http://127.0.0.1:9/v1"\nllm_api_key = "k3"\nllm_timeout = 7\n')
    s = Settings.load(env={"CITADEL_CONFIG": str(config)})
    assert (s.generator, s.llm_model, s.llm_timeout) == ("openai", "m", 7.0)
    assert s.llm_api_key.get_secret_value() == "k3" and "k3" not in repr(s)
    assert get_generator(s).name == "openai:m"


@pytest.mark.parametrize("overrides, message", [
    ({}, "CITADEL_LLM_MODEL"),
    ({"llm_model": "m", "llm_json_mode": "xml"}, "llm_json_mode"),
    ({"llm_model": "m", "llm_prompt": "nope-v9"}, "nope-v9"),
    ({"llm_model": "m", "llm_base_url": "ftp://x"}, "http://"),
])
def test_openai_generator_configuration_errors_say_what_to_fix(overrides, message):
    from citadel.config import ConfigError

    with pytest.raises(ConfigError, match=message):
        get_generator(Settings(generator="openai", **overrides))


def test_a_refusal_with_a_verified_citation_abstains_never_grounded(hashing_engine, llm):
    def cited_refusal(req: Seen) -> str:
        label = req.label_of(FACT)
        return answer_json(f"I don't have enough information to answer that. [{label}]",
                           [(label, FACT)])

    answer = ask(hashing_engine, llm, "m-cited-refusal", Reply(cited_refusal))
    assert_abstained_cleanly(answer)
    assert len(llm.requests["m-cited-refusal"]) == 1  # an abstention is not retried


def test_a_refusal_beside_a_grounded_sentence_is_left_out(hashing_engine, llm):
    def half(req: Seen) -> str:
        label = req.label_of(FACT)
        return answer_json(f"{FACT} [{label}]. I don't have enough information about "
                           f"Sunday deliveries. [{label}]", [(label, FACT)])

    answer = ask(hashing_engine, llm, "m-half-refusal", Reply(half))
    assert answer.grounded and "enough information" not in answer.answer


def test_v2_prompt_asks_for_quotes_first_and_lists_labels_in_display_order(
        hashing_engine, llm):
    answer = ask(hashing_engine, llm, "m-v2", Reply(correct), llm_prompt="grounded-v2",
                 llm_retry_prompt="grounded-strict-v2")
    assert answer.grounded and answer.trace.prompt_version == "grounded-v2"
    body = llm.requests["m-v2"][0].body
    schema = body["response_format"]["json_schema"]["schema"]
    assert list(schema["properties"]) == ["citations", "answer", "confidence"]
    quote = schema["properties"]["citations"]["items"]["properties"]["quote"]
    assert quote["minLength"] >= 1
    system, user = (m["content"] for m in body["messages"])
    assert system == load_prompt("grounded-v2").system  # fixed text: a prompt cache reuses it
    shown = re.findall(r"^\[(S\d+)\]", user, flags=re.M)
    assert re.search(r"Source blocks \(([^)]*)\)", user).group(1) == ", ".join(shown)


def test_an_exact_quote_under_another_blocks_label_is_cited_from_its_block(hashing_engine, llm):
    """Small models name a block by position: the quote decides, the gate verifies."""
    def slipped(req: Seen) -> str:
        right = req.label_of(FACT)
        wrong = next(label for label in req.blocks if label != right)
        return answer_json(f"{FACT} [{wrong}].", [(wrong, FACT)])

    answer = ask(hashing_engine, llm, "m-slip", Reply(slipped))
    assert answer.grounded and [c.quote for c in answer.citations] == [FACT]
    assert answer.trace.attempts[0].relabelled == 1
    assert len(llm.requests["m-slip"]) == 1
