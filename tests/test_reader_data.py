"""scripts/reader_data.py: the checks on the reader's written training data."""

import importlib.util
import json
import sys

from tests.conftest import ROOT

spec = importlib.util.spec_from_file_location("reader_data", ROOT / "scripts" / "reader_data.py")
reader_data = importlib.util.module_from_spec(spec)
sys.modules["reader_data"] = reader_data  # its dataclasses look their module up
spec.loader.exec_module(reader_data)

PASSAGE = ("Harbour Bikes repairs punctures while you wait for £12. A full service costs £65 "
           "and takes two working days. We accept cards and bank transfers. The workshop on "
           "Quay Street is open Monday to Saturday from 8am to 6pm. Electric bikes are "
           "serviced at our Mill Lane branch only. Bikes left for more than 30 days after "
           "we call are sold to cover the cost of storage and repairs.")


def record(rid="t-0001", passage=PASSAGE, **question):
    q = {"q": "How much is a puncture repair?", "label": "answered", "answer": "£12",
         "kind": "number"}
    q.update(question)
    others = [{"q": f"question {i}?", "label": "unanswered", "kind": "topic-absent"}
              for i in range(5)]
    return {"id": rid, "brief": "passages-v1", "domain": "support/services",
            "format": "prose", "title": "Repairs", "passage": passage,
            "questions": [q, *others]}


def write(path, *records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_a_valid_record_is_kept_and_counted(tmp_path):
    report = reader_data.validate([write(tmp_path / "a.jsonl", record())])
    assert report.errors == [] and len(report.kept) == 1
    assert report.counts["answered"] == 1 and report.counts["unanswered"] == 5


def test_an_answer_not_copied_exactly_is_an_error(tmp_path):
    report = reader_data.validate([write(tmp_path / "a.jsonl", record(answer="12 pounds"))])
    assert report.kept == [] and "not copied exactly" in report.errors[0]


def test_an_unknown_kind_and_a_repeated_passage_are_errors(tmp_path):
    path = write(tmp_path / "a.jsonl", record(kind="vibes"), record("t-0002"),
                 record("t-0003"))
    report = reader_data.validate([path])
    assert any("unknown answered kind 'vibes'" in e for e in report.errors)
    assert any("same text as t-0002" in e for e in report.errors)
    assert [r["id"] for r in report.kept] == ["t-0002"]


def test_bad_json_names_its_line(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps(record()) + "\n{oops\n")
    report = reader_data.validate([path])
    assert report.errors == ["a.jsonl:2: not JSON (Expecting property name enclosed in "
                             "double quotes)"]


def test_a_blind_sample_hides_the_labels_and_agreement_is_measured_on_it():
    blind, key = reader_data.sample([record()], n=6, seed=1)
    assert all("label" not in b for b in blind) and len(key) == 6
    relabel = [{"id": k["id"], "qi": k["qi"], "label": k["label"]} for k in key]
    relabel[0]["label"] = "unsure"
    figures = reader_data.agreement(key, relabel)
    assert figures["items"] == 6 and figures["agree"] == 5
    assert figures["disagreements"][0]["relabel"] == "unsure"
