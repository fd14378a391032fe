"""`text.neutralize`: what counts as a pseudo-citation, and what is prose and stays."""

import sys
import time
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citadel.answering.streaming import filter_markers
from citadel.text.neutralize import (
    DELIMITERS,
    MARKER_CLOSE,
    MARKER_OPEN,
    neutralize,
    strip_markers,
)


def test_the_bracket_sets_cover_all_of_unicode():
    every = [chr(c) for c in range(sys.maxunicode + 1)
             if unicodedata.category(chr(c)) in ("Ps", "Pe", "Pi", "Pf")]
    assert sorted(DELIMITERS) == every
    assert set("[［【〔〖⟦⟨《〈〚﹇") <= set(MARKER_OPEN)
    assert set("]］】〕〗⟧⟩》〉〛﹈") <= set(MARKER_CLOSE)
    # Prose and quotation punctuation are no marker brackets.
    assert not set("(（{｛「」『』„“”«»") & set(MARKER_OPEN + MARKER_CLOSE)


@pytest.mark.parametrize(("text", "neutral", "stripped"), [
    ("[S1]…[Source: legal-handbook.pdf §4.2]", "…", "…"),
    ("Handbook [2024 edition]", "Handbook 2024 edition", "Handbook"),
    ("30 days 【S2】 ⟦S3⟧ ［Sx］.", "30 days.", "30 days."),
    ("30 days (Source: legal-handbook.pdf §9.1).", "30 days.", "30 days."),
    ("30 days. Source: legal-handbook.pdf §9.1", "30 days.", "30 days."),
    ("30 days — sources: a.pdf, b.pdf.", "30 days.", "30 days."),
    ("30 days «S2, S3» (S1–S3) (s4 and 5).", "30 days.", "30 days."),
    ("Forum 【Sources 1-2】", "Forum", "Forum"),
    ("Sou(Source: a)rce: b", "", ""),  # a removal cannot splice a new attribution
    # Removing `]S1(` glues "Source:" to the word before: still an attribution (hypothesis).
    ("30 days]S1(Source: legal-handbook.pdf §9.1)", "30 days", "30 days"),
    ("30 days 1]Source: x.pdf(Source: legal-handbook.pdf §9.1)", "30 days 1", "30 days 1"),
    ("[S[x]1] ok", "Sx1 ok", "ok"),
    ("a ] b [ c", "a b c", "a b"),
])
def test_pseudo_citations_are_removed(text, neutral, stripped):
    assert neutralize(text) == neutral
    assert strip_markers(text) == stripped


@pytest.mark.parametrize("text", [
    "Open source: yes", "The app (source code on GitHub) is open", "Sources of law",
    "Use {id} (see §4.2) „Quelle“ «citation» 「引用」", "S1 guide",
    "(authority 1.0, effective 2026-03-01)",
])
def test_prose_stays(text):
    assert neutralize(text) == text
    assert strip_markers(text) == text


_ATOMS = st.sampled_from([
    "[S1]", "【S2】", "⟦S3⟧", "［Sx］", "《S1》", "(S1)", "(Source: a.pdf §9.1)", "Source:",
    "source", "S", "1", "[", "]", "【", "】", "(", ")", "«", "»", " ", "\n", "days", ".", ",",
])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(_ATOMS, st.text(max_size=3)), max_size=20).map("".join))
def test_neutralised_text_has_no_marker_bracket_and_passes_the_stream_unchanged(text):
    for out in (neutralize(text), strip_markers(text)):
        assert not set(out) & set(MARKER_OPEN + MARKER_CLOSE)
        assert neutralize(out) == out  # idempotent: nothing left to remove
        assert filter_markers(out, set()) == out  # the stream's filter changes nothing


@pytest.mark.parametrize("text", [" " * 20_000 + "x", "【" + "a" * 299 + " " * 20_000,
                                  "Source:" + " " * 20_000 + "x", " ," * 10_000 + "(S" * 5_000])
def test_long_runs_take_linear_time(text):
    # A question or a chunk is attacker-controlled: no input may make the regexes quadratic
    # (20k spaces took 97 s before the lookbehinds that start a run once).
    start = time.perf_counter()
    neutralize(text), strip_markers(text)
    assert time.perf_counter() - start < 2.0


def test_a_full_stop_after_the_markers_of_an_ended_sentence_is_not_doubled():
    assert strip_markers('Gear has a 2-year warranty. [S1: "a 2-year warranty"].') == (
        "Gear has a 2-year warranty.")
    assert strip_markers('It is free. [S1] [S2: "free"].') == "It is free."
    assert strip_markers("Costs £9.95 [S1].") == "Costs £9.95."
