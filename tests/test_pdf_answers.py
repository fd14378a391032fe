"""Questions answered from PDF and Word sources: citations name the page of their quote, the
CLI prints it, and `citadel verify` re-checks PDF receipts page and all."""

from __future__ import annotations

import json

from click.testing import CliRunner

from citadel.cli import main
from citadel.cli.ask import render_answer
from citadel.knowledge.verify import parse_receipts, verify_receipts
from tests.documents import GEOTOPO

# Read off page 12 of the 117-page German lecture script (a footnote to "Beispiel 11").
GEOTOPO_QUESTION = "Welche Metrik wird auch französische Eisenbahnmetrik genannt?"
GEOTOPO_QUOTE = "Diese Metrik wird auch „französische Eisenbahnmetrik“ genannt"


def test_a_question_on_page_12_of_the_lecture_script_cites_page_12(documents_engine):
    answer = documents_engine.answer(GEOTOPO_QUESTION)
    assert answer.grounded and not answer.abstained
    [citation] = [c for c in answer.citations if GEOTOPO_QUOTE in c.quote]
    assert citation.source == GEOTOPO
    assert (citation.page_start, citation.page_end) == (12, 12)
    assert citation.section == "1.2 Metrische Räume"  # from the PDF's outline
    document = documents_engine.index.get_document(citation.document_id)
    assert document.text[citation.start : citation.end] == citation.quote
    assert document.page_at(citation.start) == 12 and len(document.pages) == 117
    assert (f"({GEOTOPO} › 1.2 Metrische Räume, p. 12)" in render_answer(answer))


def test_a_word_answer_cites_its_heading_and_no_page(documents_engine):
    answer = documents_engine.answer("How quickly is a priority ticket answered?")
    [citation] = [c for c in answer.citations if c.source == "service-levels.docx"]
    assert citation.section == "4.2 Thresholds"
    assert citation.quote.startswith("A priority ticket is answered within 4 hours")
    assert citation.page_start is None and citation.page_end is None
    assert "(service-levels.docx › 4.2 Thresholds)" in render_answer(answer)


def test_cli_ask_prints_the_page_of_a_pdf_citation(documents_engine):
    env = {"CITADEL_HOME": str(documents_engine.settings.home), "CITADEL_EMBEDDER": "hashing"}
    result = CliRunner().invoke(main, ["ask", GEOTOPO_QUESTION], env=env)
    assert result.exit_code == 0, result.output
    source_lines = [line for line in result.output.splitlines()
                    if GEOTOPO_QUOTE in line and line.startswith("  [")]
    assert source_lines and source_lines[0].endswith(
        f"({GEOTOPO} › 1.2 Metrische Räume, p. 12)")


def test_verify_passes_a_pdf_receipt_and_fails_a_forged_page(documents_engine):
    answer = documents_engine.answer(GEOTOPO_QUESTION)
    receipts = parse_receipts(answer.model_dump_json())
    assert receipts and all(r.page_start == 12 for r in receipts)
    verdicts = verify_receipts(documents_engine.settings, receipts)
    assert all(v.ok for v in verdicts), [v.reason for v in verdicts]

    cited = json.loads(answer.model_dump_json())["citations"][0]
    forged = parse_receipts(json.dumps([{**cited, "page_start": 13, "page_end": 13},
                                        {**cited, "page_start": None, "page_end": None}]))
    verdicts = verify_receipts(documents_engine.settings, forged)
    assert [v.ok for v in verdicts] == [False, False]
    assert verdicts[0].reason == (f"the quote is on pages 12 of {cited['document_id']}, "
                                  "the citation says 13")
