from citadel.text.quotes import locate_quote, normalize


def test_normalize_ignores_case_whitespace_and_punctuation():
    normalized = normalize("Returns are  accepted,\nwithin 30-days!")
    assert normalized == "returns are accepted within 30 days"


def test_locate_quote_tolerates_drift_and_returns_source_offsets():
    content = "Intro.\nReturns are accepted within 30 days of delivery."
    start, end = locate_quote("returns ARE accepted within 30 days", content)
    assert content[start:end] == "Returns are accepted within 30 days"


def test_locate_quote_rejects_a_changed_number():
    content = "Returns are accepted within 30 days of delivery."
    assert locate_quote("Returns are accepted within 14 days", content) is None


def test_locate_quote_respects_token_boundaries():
    content = "Returns are accepted within 130 days of delivery."
    assert locate_quote("within 30 days", content) is None


def test_locate_quote_rejects_a_changed_word():
    content = "Sale items are refundable on the same terms."
    assert locate_quote("Sale items are not refundable", content) is None


def test_locate_quote_rejects_trivial_quotes():
    assert locate_quote("a", "a b c") is None
    assert locate_quote("...", "a b c") is None


def test_unicode_compatibility_forms_match():
    content = "Gift cards are valid for 24 months."
    assert locate_quote("ＧＩＦＴ cards are valid", content) is not None


def _reference_normalize_with_map(text: str) -> tuple[str, list[int]]:
    """The definition, one character at a time (what the fast path must equal)."""
    import unicodedata

    out: list[str] = []
    index: list[int] = []
    pending_space = False
    for i, ch in enumerate(text):
        for f in unicodedata.normalize("NFKC", ch).casefold():
            if f.isalnum():
                if pending_space and out:
                    out.append(" ")
                    index.append(i)
                pending_space = False
                out.append(f)
                index.append(i)
            else:
                pending_space = True
    return "".join(out), index


def test_normalize_with_map_equals_the_character_loop():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from citadel.text.quotes import normalize_with_map

    @settings(max_examples=400, deadline=None, derandomize=True)
    @given(st.one_of(st.text(alphabet=st.characters(codec="ascii")),
                     st.text(alphabet="aZ9 ,.-\n\t_éßﬁ½①Ⅳ£€—’\u00a0\u0301İ")))
    def check(text):
        assert normalize_with_map(text) == _reference_normalize_with_map(text)

    check()
    for text in ("", "  ", "--a--", "Returns: 30 days (UK)!", "ﬁne Straße", "x\u0301y"):
        assert normalize_with_map(text) == _reference_normalize_with_map(text)
