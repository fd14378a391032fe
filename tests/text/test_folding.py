"""Folding undoes what makes text read the same to a person but differ to a pattern."""

import pytest

from citadel.text.folding import fold


@pytest.mark.parametrize(("text", "folded"), [
    ("ig\u200bnore", "ignore"),                      # zero-width space
    ("ig\u00adnore", "ignore"),                      # soft hyphen
    ("ig\u2060no\u200dre", "ignore"),                # word joiner, zero-width joiner
    ("ign\u043ere", "ignore"),                       # Cyrillic о
    ("\u0406gnore", "Ignore"),                       # Cyrillic І stands for I, not l
    ("previ\u03bfus", "previous"),                   # Greek ο
    ("ＩＧＮＯＲＥ", "IGNORE"),                        # full-width
    ("\U0001d422\U0001d420\U0001d427\U0001d428\U0001d42b\U0001d41e", "ignore"),  # math bold
    ("I\u0301g\u0301nore", "Ignore"),                # combining accents
    ("précédentes", "precedentes"),
    ("ﬁne", "fine"),                                 # ligature
    ("a\u00a0b", "a b"),                             # no-break space
    ("x" + "".join(chr(0xE0000 + ord(c)) for c in "hi") + "y", "xhiy"),  # tag characters
])
def test_fold(text, folded):
    assert fold(text).text == folded


def test_ascii_and_unchanging_text_is_returned_as_it_is():
    for text in ("Plain text.", "Curly “quotes” — and dashes"):
        folded = fold(text)
        assert folded.text is text and folded.origin(3) == 3


def test_non_latin_words_are_left_alone_in_non_latin_text():
    assert fold("Вот: привет мир").text == "Вот: привет мир"
    # ... but a word mixing scripts is folded even there.
    assert "ignore" in fold("Вот привет мир, ignоre").text


def test_offsets_map_back_to_the_source():
    source = "ab\u200bc ign\u043ere ＯＫ"
    folded = fold(source)
    start = folded.text.index("ignore")
    assert source[slice(*folded.span(start, start + 6))] == "ign\u043ere"
    start = folded.text.index("OK")
    assert source[slice(*folded.span(start, start + 2))] == "ＯＫ"
