"""Scripted readers (the oracle and the guesser): what they cite, that the gate verifies it,
that they are reachable only through `citadel eval --reader`, and the suites' plumbing."""

import hashlib
import json

import pytest
from click.testing import CliRunner

from citadel.answering.generators import get_generator
from citadel.cli import eval as eval_cli
from citadel.cli import main
from citadel.config import ConfigError
from citadel.evaluation import suites
from citadel.evaluation.claims import LexicalClaimScorer
from citadel.evaluation.counterfactual import CounterfactualCase, run_counterfactual, write_cases
from citadel.evaluation.datasets import Dataset
from citadel.evaluation.scripted_readers import (
    READERS,
    GuesserReader,
    OracleReader,
    make_reader,
)
from citadel.evaluation.squad2 import load_squad2, run_squad2
from citadel.gate import gate
from citadel.records import Chunk, Context, ContextBlock, RankedChunk
from tests.conftest import hashing_settings

QUESTION = "Where is the Acme company headquartered?"
ACME = ("# Acme\n\nThe Acme company makes rockets. Its head office is in **Lyon**, France. "
        "It was founded in 1921.")
RIVERS = "The Rhone flows through Geneva. Where does the Rhone end? It reaches the sea."


def chunk(doc: str, content: str) -> Chunk:
    return Chunk(chunk_id=f"{doc}#1", document_id=doc, source=f"{doc}.md", title=doc.title(),
                 section="Overview", content=content, start=0, end=len(content),
                 content_sha256=hashlib.sha256(content.encode()).hexdigest())


def context(*contents: str) -> Context:
    return Context(blocks=tuple(
        ContextBlock(label=f"S{i}", ranked=RankedChunk(
            chunk=chunk(f"doc{i}", text), retrieval_score=1.0 - i / 10, rank=i))
        for i, text in enumerate(contents, 1)))


def test_oracle_cites_the_sentence_holding_the_gold_answer_with_an_exact_quote():
    ctx = context(RIVERS, ACME)
    oracle = OracleReader({QUESTION: ("lyon",)})
    draft = oracle.generate(QUESTION, ctx)
    assert not draft.abstain
    (sentence,) = draft.sentences
    assert sentence.text == "Its head office is in Lyon, France."
    (citation,) = sentence.citations
    assert citation.label == "S2" and citation.quote in ACME
    assert draft.span is not None and (draft.span.label, draft.span.text) == ("S2", "Lyon")
    assert (draft.generator, draft.prompt_version) == ("oracle-reader", "scripted-v1")
    result = gate(draft, ctx, "kb-test")
    assert not result.dropped and [c.label for c in result.citations] == ["S2"]
    assert result.span is not None and result.span.text == "Lyon"


def test_oracle_takes_gold_answers_per_question_and_skips_headings():
    oracle = OracleReader()
    oracle.expect(QUESTION, ("Acme",))
    draft = oracle.generate(QUESTION, context(ACME))
    assert draft.sentences[0].text == "The Acme company makes rockets."  # not "# Acme"
    oracle.expect(QUESTION, ("1921",))
    assert oracle.generate(QUESTION, context(ACME)).sentences[0].text == (
        "It was founded in 1921.")


def test_oracle_cites_the_gold_place_not_an_earlier_mention_of_the_same_words():
    acme = ACME + " Acme moved its head office to Lyon in 1950."
    at = acme.index("Acme moved")
    oracle = OracleReader()
    oracle.expect("Where did Acme move its head office?", ("Lyon",),
                  [("doc1", at + len("Acme moved its head office to "),
                    at + len("Acme moved its head office to Lyon"))])
    draft = oracle.generate("Where did Acme move its head office?", context(acme))
    assert draft.sentences[0].text == "Acme moved its head office to Lyon in 1950."
    oracle.expect("Where did Acme move its head office?", ("Lyon",))  # place unknown
    draft = oracle.generate("Where did Acme move its head office?", context(acme))
    assert draft.sentences[0].text == "Its head office is in Lyon, France."


@pytest.mark.parametrize("gold", [{QUESTION: ("Turin",)}, {QUESTION: ()}, {}])
def test_oracle_abstains_without_a_sentence_holding_a_known_gold_answer(gold):
    draft = OracleReader(gold).generate(QUESTION, context(RIVERS, ACME))
    assert draft.abstain and not draft.sentences and draft.generator == "oracle-reader"


def test_guesser_cites_the_statement_sharing_most_words_with_the_question():
    ctx = context(RIVERS, ACME)
    draft = GuesserReader().generate("Where does the Rhone reach the sea?", ctx)
    (sentence,) = draft.sentences
    # "Where does the Rhone end?" shares as many words, but a question states nothing.
    assert sentence.text == "It reaches the sea."
    assert sentence.citations[0].label == "S1" and draft.span is None
    assert (draft.generator, draft.prompt_version) == ("guesser-reader", "scripted-v1")
    assert not gate(draft, ctx, "kb-test").dropped


def test_guesser_breaks_ties_by_context_order_and_always_answers():
    ctx = context(RIVERS, ACME)
    first = GuesserReader().generate("Which river?", ctx)  # shares nothing with anything
    assert not first.abstain and first.sentences[0].text == "The Rhone flows through Geneva."
    assert GuesserReader().generate(QUESTION, context("# Acme\n\nIs it Lyon?")).abstain


def test_scripted_readers_decide_and_are_evaluation_only(tmp_path):
    assert OracleReader.decides and GuesserReader.decides
    assert isinstance(make_reader("oracle"), OracleReader)
    assert isinstance(make_reader("guesser"), GuesserReader)
    for name in ("oracle", "guesser", "oracle-reader", "guesser-reader"):
        with pytest.raises(ConfigError, match="unknown generator"):
            get_generator(hashing_settings(tmp_path, generator=name))
    assert eval_cli.READERS == READERS and eval_cli.READER_SUITES == suites.READER_SUITES


def test_a_reader_is_refused_by_suites_without_gold_answers(tmp_path):
    with pytest.raises(ValueError, match="unknown reader"):
        suites.RunOptions(hashing_settings(tmp_path), LexicalClaimScorer(), reader="nope")
    options = suites.RunOptions(hashing_settings(tmp_path), LexicalClaimScorer(),
                                reader="oracle", progress=False)
    with pytest.raises(ValueError, match="the demo suite has none"):
        suites.run_qa(Dataset(name="x", path=str(tmp_path), version="v", sha256="", rows=()), [],
                      options)


def test_cli_reader_needs_a_suite_with_gold_answers():
    runner = CliRunner()
    demo = runner.invoke(main, ["eval", "--suite", "demo", "--reader", "oracle"])
    assert demo.exit_code == 2
    assert "--reader applies to --suite squad2 and counterfactual only" in demo.output
    both = runner.invoke(main, ["eval", "--suite", "squad2", "--reader", "oracle",
                                "--generator", "openai"])
    assert both.exit_code == 2 and "either --reader or --generator" in both.output
    unknown = runner.invoke(main, ["eval", "--suite", "squad2", "--reader", "nope"])
    assert unknown.exit_code == 2 and "oracle" in unknown.output


# --- the suites with a reader (the mini SQuAD file of test_squad2) ---------------------------

SQUAD = {"version": "v2.0", "data": [
    {"title": "Lyon_Company", "paragraphs": [
        {"context": "The Acme company is headquartered in Lyon. It was founded in 1921 by "
                    "two engineers from Paris.",
         "qas": [
             {"id": "q1", "question": "Where is the Acme company headquartered?",
              "is_impossible": False, "answers": [{"text": "Lyon", "answer_start": 37}]},
             {"id": "q2", "question": "Where is the Acme company's factory?",
              "is_impossible": True, "answers": [],
              "plausible_answers": [{"text": "Lyon", "answer_start": 37}]},
         ]}]},
]}


@pytest.fixture
def squad_file(tmp_path):
    path = tmp_path / "mini-squad.json"
    path.write_text(json.dumps(SQUAD))
    return path


@pytest.mark.parametrize("reader", READERS)
def test_squad2_with_a_reader_records_it_and_scores_the_decision_layer(
        squad_file, tmp_path, reader):
    options = suites.RunOptions(hashing_settings(tmp_path / "home"), LexicalClaimScorer(),
                                progress=False, reader=reader)
    run = run_squad2(load_squad2(squad_file), options)
    assert run.config["reader"] == reader
    counts = run.tally.counts()
    assert counts["released_with_gold_in_context"]["n"] == 1
    assert counts["withheld_before_model"]["n"] == 1
    assert counts["unanswerable_stopped"]["n"] == 1
    assert run.tally.metrics()["citation_integrity"] == 1.0
    assert run.tally.metrics()["quote_validity"] == 1.0
    generators = {row["response"]["trace"]["generator"] for row in run.rows} - {""}
    assert generators <= {f"{reader}-reader"}


def test_squad2_without_a_reader_is_unchanged(squad_file, tmp_path):
    run = run_squad2(load_squad2(squad_file), suites.RunOptions(
        hashing_settings(tmp_path / "home"), LexicalClaimScorer(), progress=False))
    assert "reader" not in run.config
    assert not {"released_with_gold_in_context", "withheld_before_model",
                "unanswerable_stopped"} & set(run.tally.counts())


def test_counterfactual_oracle_is_told_the_true_paragraphs_answer(squad_file, tmp_path):
    case = CounterfactualCase(id="cf-q1", question_id="q1", question=QUESTION,
                              paragraph_id="lyon-company-000", answers=("Lyon",),
                              original="Lyon", replacement="Turin", kind="GPE")
    path = tmp_path / "cases.jsonl"
    write_cases([case], path)
    options = suites.RunOptions(hashing_settings(tmp_path / "home"), LexicalClaimScorer(),
                                progress=False, reader="oracle")
    run = run_counterfactual(load_squad2(squad_file), path, options)
    assert run.config["reader"] == "oracle"
    assert run.tally.counts()["fooled"] == {"sum": 0, "n": 1}


def test_squad2_gold_places_point_at_the_answers_in_the_written_documents(squad_file, tmp_path):
    from citadel.evaluation.squad2 import gold_places, write_corpus

    data = load_squad2(squad_file)
    folder = write_corpus(list(data.paragraphs.values()), tmp_path / "corpus")
    checked = 0
    for q in data.questions:
        for doc, start, end in gold_places(q, data.paragraphs[q.paragraph_id]):
            text = (folder / f"{doc}.md").read_text("utf-8")
            assert text[start:end] in q.answers
            checked += 1
    assert checked
