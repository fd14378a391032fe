"""citadel-sources.toml's `[examples]` (the page's example questions) and `[[websites]]`,
read and checked."""

import re
from pathlib import Path

import pytest

from citadel.config import ConfigError
from citadel.ingest.operator_metadata import read_examples, read_sources_file, read_websites
from citadel.knowledge.snapshots import MAX_EXAMPLES, Examples
from tests.conftest import DEMO_KB


def sources_file(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "citadel-sources.toml").write_text(text)
    return folder


def test_examples_are_read_in_file_order_beside_the_sources_tables(tmp_path):
    kb = sources_file(tmp_path, '[examples]\nquestions = ["How do I descale it?", '
                                '"  Is it dishwasher safe?  "]\n'
                                'customer_questions = ["Where is my order?"]\n\n'
                                '[sources."a.md"]\nauthority = 0.5\n')
    assert read_examples([kb]) == Examples(
        questions=("How do I descale it?", "Is it dishwasher safe?"),
        customer_questions=("Where is my order?",))
    assert read_sources_file(kb)["a.md"].authority == 0.5  # the examples table is allowed


def test_no_file_or_no_examples_table_means_no_examples(tmp_path):
    assert read_examples([tmp_path]) == Examples()
    kb = sources_file(tmp_path / "kb", '[sources."a.md"]\nauthority = 0.5\n')
    assert read_examples([kb]) == Examples()


def test_the_demo_knowledge_base_has_the_questions_the_page_showed():
    examples = read_examples([DEMO_KB])
    assert examples.questions == ("How long do I have to return an item?",
                                  "How much does express delivery cost?",
                                  "How long are gift cards valid?",
                                  "What is the capital of France?")
    assert examples.customer_questions[0] == "Can I get a refund for order 1042?"


def test_a_file_given_alone_is_read_with_its_folders_examples_and_roots_merge_in_order(
        tmp_path):
    first = sources_file(tmp_path / "first", '[examples]\nquestions = ["A?", "B?"]\n')
    second = sources_file(tmp_path / "second", '[examples]\nquestions = ["B?", "C?"]\n')
    (second / "doc.md").write_text("# Doc\n\nText.\n")
    assert read_examples([first, second / "doc.md", second]).questions == ("A?", "B?", "C?")


def test_several_roots_keep_the_first_questions_up_to_the_limit(tmp_path):
    roots = [sources_file(tmp_path / f"kb{i}", "[examples]\nquestions = ["
                          + ", ".join(f'"Q{i}-{n}?"' for n in range(MAX_EXAMPLES)) + "]\n")
             for i in range(2)]
    questions = read_examples(roots).questions
    assert len(questions) == MAX_EXAMPLES and questions[0] == "Q0-0?"


@pytest.mark.parametrize(("text", "message"), [
    ('[examples]\nquestions = "How?"\n', r"\[examples\]: questions must be a list"),
    ('[examples]\nquestions = [1, 2]\n', r"\[examples\]: questions\.0: Input should be a "
                                         r"valid string"),
    ('[examples]\ncustomer_questions = ["   "]\n', r"customer_questions\.0: String should "
                                                   r"have at least 1 character"),
    ('[examples]\nquestions = ["' + "x" * 201 + '"]\n', r"questions\.0: String should have "
                                                        r"at most 200 characters"),
    ("[examples]\nquestions = [" + ", ".join(['"Q?"'] * (MAX_EXAMPLES + 1)) + "]\n",
     rf"questions has {MAX_EXAMPLES + 1} questions; the page shows at most {MAX_EXAMPLES}"),
    ('[examples]\nquestion = ["How?"]\n', r"\[examples\]: question: Extra inputs are not "
                                          r"permitted"),
    ('examples = ["How?"]\n', r"'examples' must be a table"),
    ('[example]\nquestions = ["How?"]\n', r"unknown table\(s\) \['example'\]"),
])
def test_a_malformed_examples_table_is_an_error_naming_the_file(tmp_path, text, message):
    kb = sources_file(tmp_path / "kb", text)
    path = re.escape(str(kb / "citadel-sources.toml"))
    with pytest.raises(ConfigError, match=rf"^{path}: .*{message}"):
        read_examples([kb])


def test_websites_are_read_in_file_order_beside_url_keyed_sources(tmp_path):
    kb = sources_file(tmp_path, '[[websites]]\nurl = "https://help.example.com"\n'
                                'include = ["/help/*"]\nmax_pages = 20\n\n'
                                '[[websites]]\nurl = "https://docs.example.com/sitemap.xml"\n\n'
                                '[sources."https://help.example.com/policies/*"]\n'
                                'authority = 0.9\n')
    first, second = read_websites(kb)
    assert (first.url, first.include, first.max_pages) == ("https://help.example.com/",
                                                           ("/help/*",), 20)
    assert second.url == "https://docs.example.com/sitemap.xml"
    assert read_sources_file(kb)["https://help.example.com/policies/*"].authority == 0.9
    assert read_websites(sources_file(tmp_path / "none", "")) == ()


@pytest.mark.parametrize(("text", "message"), [
    ('websites = "https://h/"\n', r"'websites' must be \[\[websites\]\] tables"),
    ('[[websites]]\nurl = "ftp://h/"\n', r"\[\[websites\]\] #1: url: Value error, "
                                         r"'ftp://h/' is not an http\(s\) URL"),
    ('[[websites]]\nurl = "https://h/"\n[[websites]]\nhost = "h"\n',
     r"\[\[websites\]\] #2: url: Field required; host: Extra inputs are not permitted"),
])
def test_a_malformed_websites_table_is_an_error_naming_the_file(tmp_path, text, message):
    kb = sources_file(tmp_path / "kb", text)
    path = re.escape(str(kb / "citadel-sources.toml"))
    with pytest.raises(ConfigError, match=rf"^{path}: {message}"):
        read_websites(kb)
