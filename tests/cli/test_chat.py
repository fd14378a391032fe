"""`citadel chat`: a thread of questions read line by line, through the real CLI process."""

import json
import subprocess
import sys

from tests.cli.test_cli import environment


def chat(home, lines: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "citadel", "chat", *args], input=lines,
                          capture_output=True, text=True, timeout=300,
                          env=environment(home, "hashing"))


def test_each_line_is_asked_with_the_lines_before_it(hashing_engine):
    out = chat(hashing_engine.settings.home, "How much does UK express delivery cost?\n"
               "And standard delivery?\n\nHow long does that take?\nexit\nnever asked?\n")
    assert out.returncode == 0, out.stderr
    turns = out.stdout.strip().split("\n\n")
    assert len(turns) == 3
    assert turns[0].startswith("> How much does UK express delivery cost?\nAnswer: ")
    assert "£9.95" in turns[0] and "Answering" not in turns[0]
    assert turns[1].splitlines()[1] == "Answering: How much does UK standard delivery cost?"
    assert "£4.95" in turns[1] and "Sources:" in turns[1]
    assert "Answering: How long does UK standard delivery take?" in turns[2]
    assert "3–5 business days" in turns[2] and "never asked" not in out.stdout


def test_new_starts_a_thread_and_json_prints_one_answer_per_line(hashing_engine):
    out = chat(hashing_engine.settings.home, "How much does UK express delivery cost?\nnew\n"
               "And standard delivery?\n", "--json")
    assert out.returncode == 0, out.stderr
    first, second = (json.loads(line) for line in out.stdout.splitlines())
    assert first["standalone"] is None and second["standalone"] is None  # a new thread
    assert "a new thread" in out.stderr


def test_a_refused_question_is_a_message_the_thread_goes_on_and_the_exit_code_says_so(
        hashing_engine):
    out = chat(hashing_engine.settings.home,
               "How much does UK express delivery cost?\n" + "x" * 3000 + "\n"
               "And standard delivery?\n")
    assert out.returncode == 1
    assert "Error: the question is 3000 characters long; the limit is 2000" in out.stderr
    assert "Traceback" not in out.stderr
    assert "Answering: How much does UK standard delivery cost?" in out.stdout


def test_without_a_knowledge_base_chat_says_what_to_do(tmp_path):
    out = chat(tmp_path, "anything?\n")
    assert out.returncode == 1 and "citadel ingest" in out.stderr
    assert "Traceback" not in out.stderr
