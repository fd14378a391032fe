import pytest

from citadel.ingest.front_matter import FrontMatterError, read_front_matter


def test_reads_quoted_values_and_skips_comments_and_blank_lines():
    text = '---\ntitle: "A: B"\n# a note\n\ncategory: help # trailing\n---\nbody'
    front = read_front_matter(text)
    assert front.values == {"title": "A: B", "category": "help"}
    assert text[front.end:] == "body"


def test_reads_inline_and_block_lists():
    front = read_front_matter("---\ntags: [a, 'b, c', \"d\"]\nalso:\n  - one\n- two\n---\n")
    assert front.items("tags") == ("a", "b, c", "d")
    assert front.items("also") == ("one", "two")


def test_a_single_value_as_a_list_is_split_at_commas():
    assert read_front_matter("---\ntags: a, b,, a\n---\n").items("tags") == ("a", "b")


def test_text_without_a_leading_block_has_no_front_matter():
    assert read_front_matter("# Title\n\n---\nkey: value\n---\n") is None
    assert read_front_matter("---\n---\nbody").values == {}


@pytest.mark.parametrize(("block", "why"), [
    ("not a key", "line 2: not `key: value`"),
    ("title: a\ntitle: b", "line 3: 'title' is given twice"),
    ("  - item", "line 2: an indented line or list item before any key"),
])
def test_malformed_lines_are_errors_naming_the_line(block, why):
    with pytest.raises(FrontMatterError, match=why):
        read_front_matter(f"---\n{block}\n---\nbody")


@pytest.mark.parametrize(("block", "why"), [
    ("title: |\n  two\n  lines", "multi-line strings are not read"),
    ("title: {a: b}", "mappings, anchors"),
    ("title:\n  nested: value", "nested values are not read"),
    ("title: [a, [b]]", "nested lists"),
    ('title: "open', "a quote is not closed"),
    ("title:\n  - name: x", "list items that are mappings"),
])
def test_other_yaml_forms_are_unreadable_only_where_they_are_read(block, why):
    front = read_front_matter(f"---\n{block}\nother: fine\n---\nbody")
    assert front.values == {"other": "fine"} and "title" in front.keys
    with pytest.raises(FrontMatterError, match=why):
        front.text("title")


def test_a_list_where_one_value_is_expected_is_an_error():
    with pytest.raises(FrontMatterError, match="must be one value"):
        read_front_matter("---\ntitle: [a, b]\n---\n").text("title")
