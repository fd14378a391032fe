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
