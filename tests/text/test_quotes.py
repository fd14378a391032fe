import pytest

from citadel.text.quotes import locate_quote, normalize, widen_amount


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


def widened(text: str, span: str) -> str:
    start = text.index(span)
    a, b = widen_amount(text, start, start + len(span))
    return text[a:b]


@pytest.mark.parametrize(("text", "span", "amount"), [
    ("UK express delivery costs £9.95.", "9.95", "£9.95"),
    ("Plus members get 10% off full-price items.", "10", "10%"),
    ("Members save 15 per cent on repairs.", "15", "15 per cent"),
    ("A gift card of US$50 or more.", "50", "US$50"),
    ("Fees are EUR 4.99 per parcel.", "4.99", "EUR 4.99"),
    ("The boots weigh 1.2 kg a pair.", "1.2", "1.2 kg"),
    ("A 99p handling fee.", "99", "99p"),
    ("Refunds take 5 business days.", "5", "5 business days"),
    ("Orders over £50 ship free.", "£50", "£50"),
])
def test_a_number_span_takes_in_its_currency_sign_percent_or_unit(text, span, amount):
    assert widened(text, span) == amount


@pytest.mark.parametrize(("text", "span"), [
    ("William landed in 1066 at Pevensey.", "1066"),
    ("See item 5 in the list.", "5"),
    ("The store is in Lyon, France.", "Lyon"),
    ("Returns within 24 months of purchase.", "24 months"),
    ("The code XEUR 4.99 is a part number.", "4.99"),
])
def test_other_spans_are_left_as_they_are(text, span):
    assert widened(text, span) == span
