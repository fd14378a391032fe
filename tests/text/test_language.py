"""Language detection for the judgement: English unless another language's stop words
clearly outnumber English ones."""

import pytest

from citadel.text.language import detect_language, lexical_words


@pytest.mark.parametrize("question, language", [
    ("Was besagt der Satz von Gauß-Bonnet?", "de"),
    ("Wie viele Tage habe ich für eine Rückgabe?", "de"),
    ("Quelle est la durée de la garantie ?", "fr"),
    ("How long do I have to return an item?", "en"),
    ("Who masterminded many terror attacks?", "en"),
    ("What was the war about?", "en"),
    ("Gauß-Bonnet?", "en"),  # nothing to go on: English
])
def test_detects_the_language_by_its_stop_words(question, language):
    assert detect_language(question) == language


def test_content_words_leave_out_that_languages_stop_words():
    assert lexical_words("Was besagt der Satz von Gauß-Bonnet?", "de") == [
        "besagt", "satz", "gauß-bonnet"]
