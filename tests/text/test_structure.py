"""text.structure: what each line of a chunk is, and what it is read with."""

from citadel.text.structure import answers_nothing, groups, lines, read_with, said, said_group

PAGE = """## Opening hours

| Day | Hours |
|---|---|
| Monday to Thursday | 7:30am to 6pm |
| Friday | 8am to 3pm |

We accept the following payment methods:
- Visa
- Apple Pay

**Do you place dental implants?**
We don't place implants ourselves.

2. SUPPORT HOURS
Monday to Friday, 09:00-17:00 CET.
"""


def _line(text: str):
    return next(ln for ln in lines(PAGE) if PAGE[ln.start:ln.end].strip() == text)


def test_each_line_has_its_role():
    roles = [(PAGE[ln.start:ln.end], ln.role) for ln in lines(PAGE)]
    assert roles == [
        ("## Opening hours", "heading"), ("| Day | Hours |", "header"), ("|---|---|", "rule"),
        ("| Monday to Thursday | 7:30am to 6pm |", "row"), ("| Friday | 8am to 3pm |", "row"),
        ("We accept the following payment methods:", "intro"), ("- Visa", "item"),
        ("- Apple Pay", "item"), ("**Do you place dental implants?**", "question"),
        ("We don't place implants ourselves.", "text"), ("2. SUPPORT HOURS", "heading"),
        ("Monday to Friday, 09:00-17:00 CET.", "text")]


def test_a_table_row_is_said_with_its_column_names():
    assert said(PAGE, _line("| Friday | 8am to 3pm |")) == "Friday — Hours: 8am to 3pm"


def test_a_list_item_is_read_with_its_introduction_and_the_list_is_one_statement():
    assert said(PAGE, _line("- Visa")) == "We accept the following payment methods: Visa"
    (group,) = groups(lines(PAGE))
    assert said_group(PAGE, group) == ("We accept the following payment methods: Visa and "
                                       "Apple Pay.")
    assert PAGE[group.start:group.end].startswith("We accept") and PAGE[
        group.start:group.end].endswith("- Apple Pay")


def test_an_faq_answer_is_read_with_its_question_and_a_heading_with_the_lines_below():
    assert read_with(PAGE, _line("We don't place implants ourselves.")) == (
        "Do you place dental implants? We don't place implants ourselves.")
    assert read_with(PAGE, _line("Monday to Friday, 09:00-17:00 CET.")).startswith(
        "SUPPORT HOURS Monday")


def test_headings_questions_headers_and_rules_never_answer():
    assert all(answers_nothing(r) for r in ("heading", "question", "intro", "header", "rule"))
    assert not any(answers_nothing(r) for r in ("text", "item", "row"))
