"""`citadel verify ANSWER.json`: citation receipts re-checked against the knowledge base."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from citadel.cli import main
from citadel.config import Settings
from citadel.ingest.pipeline import ingest
from citadel.knowledge.verify import (
    Receipt,
    link_problems,
    origin_of,
    parse_receipts,
    server_origins,
    source_fragment,
    verify_receipts,
)
from citadel.retrieval.embedders.hashing import HashingEmbedder


def run(home: Path, *args: str):
    result = CliRunner().invoke(main, list(args),
                                env={"CITADEL_HOME": str(home), "CITADEL_EMBEDDER": "hashing"})
    assert "Traceback" not in result.output
    return result


def saved_answer(demo_kb: Path, home: Path, tmp_path: Path) -> tuple[Path, dict]:
    ingest([demo_kb], Settings(home=home, embedder="hashing"), embedder=HashingEmbedder(),
           progress=False)
    # Answered from the refunds policy, a Markdown file with front matter.
    out = run(home, "ask", "--json", "Within how many business days is my refund issued?")
    assert out.exit_code == 0
    path = tmp_path / "answer.json"
    path.write_text(out.output)
    answer = json.loads(out.output)
    assert answer["citations"]
    return path, answer


def test_verify_passes_on_a_fresh_answer(demo_kb, tmp_path):
    home = tmp_path / "home"
    path, answer = saved_answer(demo_kb, home, tmp_path)
    result = run(home, "verify", str(path))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    n = len(answer["citations"])
    assert lines[0].startswith("PASS signature: valid, signed by key "
                               f"{answer['receipt']['key_id']} (active)")
    assert lines[1] == "PASS answer: exactly what was signed"
    assert lines[2] == f"PASS snapshot {answer['trace']['snapshot_id']}: active"
    for line, c in zip(lines[3:3 + n], answer["citations"], strict=True):
        assert line.startswith(f"PASS [{c['label']}] {c['chunk_id']} @ {c['snapshot_id']}")
    assert lines[3 + n:] == [f"{n} of {n} citations verified against their snapshot",
                             "verified"]


def file_text(path: Path) -> str:
    """A file as Python reads it by default: what Markdown and text offsets index."""
    with open(path, encoding="utf-8") as f:
        return f.read()


def test_a_demo_citation_of_a_file_with_front_matter_indexes_the_file(demo_kb, tmp_path):
    _, answer = saved_answer(demo_kb, tmp_path / "home", tmp_path)
    cited = [c for c in answer["citations"] if c["source"] == "refunds-policy.md"]
    assert cited
    text = file_text(demo_kb / "refunds-policy.md")
    assert text.startswith("---\n")  # the demo's policy has front matter
    for c in cited:
        assert text[c["start"] : c["end"]] == c["quote"]
    for c in answer["citations"]:
        if c["source"].endswith((".md", ".txt")):
            assert file_text(demo_kb / c["source"])[c["start"] : c["end"]] == c["quote"]


# Markdown with and without front matter, text with CRLF line endings, and a byte-order mark
# before CRLF front matter: each one's citation must index the file as Python reads it.
OFFSET_FILES = {
    "shipping.md": (b"---\ntitle: Shipping policy\ncategory: shipping\ntags: [delivery]\n---"
                    b"\n\n# Shipping policy\n\nStandard delivery takes four working days "
                    b"within the country.\n", "How long does standard delivery take?"),
    "warranty.md": (b"# Warranty\n\nEvery kettle carries a two year warranty against "
                    b"manufacturing faults.\n", "How long is the kettle warranty?"),
    "hours.txt": (b"Store hours\r\n\r\nThe Leeds store opens at nine in the morning on "
                  b"weekdays.\r\nIt closes at six in the evening.\r\n",
                  "When does the Leeds store open?"),
    "gifts.md": (b"\xef\xbb\xbf---\r\ncategory: gifts\r\n---\r\n# Gift wrapping\r\n\r\n"
                 b"Gift wrapping costs three pounds per parcel.\r\n",
                 "How much does gift wrapping cost?"),
}


@pytest.mark.parametrize("name", sorted(OFFSET_FILES))
def test_a_citation_indexes_its_markdown_or_text_file_and_verifies(tmp_path, name):
    kb = tmp_path / "kb"
    kb.mkdir()
    for file, (raw, _) in OFFSET_FILES.items():
        (kb / file).write_bytes(raw)
    home = tmp_path / "home"
    ingest([kb], Settings(home=home, embedder="hashing"), embedder=HashingEmbedder(),
           progress=False)
    out = run(home, "ask", "--json", OFFSET_FILES[name][1])
    assert out.exit_code == 0, out.output
    answer = json.loads(out.output)
    cited = [c for c in answer["citations"] if c["source"] == name]
    assert answer["grounded"] and cited
    text = file_text(kb / name)
    for c in cited:
        assert text[c["start"] : c["end"]] == c["quote"]
    path = tmp_path / "answer.json"
    path.write_text(out.output)
    result = run(home, "verify", str(path))
    assert result.exit_code == 0 and result.output.splitlines()[-1] == "verified", result.output


def test_a_deleted_snapshot_leaves_a_signed_answer_verified_by_its_signature_alone(
    demo_kb, tmp_path
):
    home = tmp_path / "home"
    path, answer = saved_answer(demo_kb, home, tmp_path)
    old = answer["citations"][0]["snapshot_id"]
    # Another document changes: a new snapshot goes live, the cited sources stay as they were.
    cited = {c["document_id"] for c in answer["citations"]}
    other = next(p for p in sorted(demo_kb.glob("*.md")) if p.stem not in cited)
    other.write_text(other.read_text() + "\nThis page was reviewed in December.\n")
    ingest([demo_kb], Settings(home=home, embedder="hashing"), embedder=HashingEmbedder(),
           progress=False)
    assert run(home, "verify", str(path)).exit_code == 0  # old snapshot still there
    assert run(home, "kb", "delete", old).exit_code == 0
    result = run(home, "verify", str(path))
    assert result.exit_code == 0, result.output
    first = answer["citations"][0]
    assert f"GONE snapshot {old}: gone" in result.output
    assert (f"UNCHECKED [{first['label']}] {first['chunk_id']} @ {old}: snapshot {old} no "
            "longer exists") in result.output
    report = json.loads(run(home, "verify", "--json", str(path)).output)
    assert report["ok"] and report["signature"]["signature"] == "valid"
    assert report["snapshots"] == {old: "gone"}
    # Without its receipt the same answer has nothing left to stand on.
    path.write_text(json.dumps({**answer, "receipt": None}))
    unsigned = run(home, "verify", str(path))
    assert unsigned.exit_code == 1
    assert (f"FAIL [{first['label']}] {first['chunk_id']} @ {old}: snapshot {old} no longer "
            "exists") in unsigned.output


def test_verify_catches_forged_hash_offsets_and_quote(demo_kb, tmp_path):
    home = tmp_path / "home"
    _, answer = saved_answer(demo_kb, home, tmp_path)
    c = answer["citations"][0]
    forged = [
        {**c, "content_sha256": "0" * 64},
        {**c, "start": c["start"] + 1, "end": c["end"] + 1},
        {**c, "quote": "not " + c["quote"][4:]},
        {**c, "chunk_id": "refunds-policy#999"},
        {**c, "start": 0, "end": 5, "quote": c["quote"][:5]},
    ]
    receipts = parse_receipts(json.dumps({"citations": [c, *forged]}))
    verdicts = verify_receipts(Settings(home=home, embedder="hashing"), receipts)
    assert [v.ok for v in verdicts] == [True, False, False, False, False, False]
    reasons = [v.reason for v in verdicts[1:]]
    assert "content hash" in reasons[0]
    assert "not the quote" in reasons[1] and "not the quote" in reasons[2]
    assert "not in snapshot" in reasons[3]
    assert "outside chunk" in reasons[4]


def test_verify_rejects_bad_input_with_a_message(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    result = run(tmp_path, "verify", str(bad))
    assert result.exit_code != 0 and "not JSON" in result.output
    bad.write_text(json.dumps({"citations": [{"chunk_id": "x"}]}))
    result = run(tmp_path, "verify", str(bad))
    assert result.exit_code != 0 and "citation 1 is malformed" in result.output
    bad.write_text(json.dumps({"answer": "I don't know", "citations": []}))
    result = run(tmp_path, "verify", str(bad))
    assert result.exit_code == 0 and "no citations to verify" in result.output


# --- a door's links ------------------------------------------------------------------------

CITATION = {"label": "S1", "chunk_id": "refunds-policy#2", "document_id": "refunds-policy",
            "source": "refunds-policy.md", "title": "Refunds", "section": "Eligibility",
            "quote": "within 30 days", "start": 10, "end": 24, "snapshot_id": "kb-1",
            "content_sha256": "0" * 64}
FRAGMENT = "doc=refunds-policy&chunk=refunds-policy%232&start=10&end=24"


def linked(url):
    return [{**CITATION, "url": url}]


def test_a_link_is_an_http_address_that_opens_its_own_quote():
    assert source_fragment(Receipt.model_validate(CITATION)) == FRAGMENT
    assert link_problems(linked(f"http://127.0.0.1:8000/#{FRAGMENT}")) == []
    assert link_problems([CITATION]) == []  # no link (`/v1/answer`): nothing to check
    for url in (f"javascript:alert(1)//#{FRAGMENT}", f"data:text/html,hi#{FRAGMENT}",
                f"//evil.example/#{FRAGMENT}", f"file:///etc/passwd#{FRAGMENT}", 42):
        assert link_problems(linked(url)) == [
            "the link of citation S1 is not an http(s) address"], url
    assert link_problems(linked("http://127.0.0.1:8000/#doc=ceo-memo&start=0&end=9")) == [
        "the link of citation S1 does not open its quote"]


def test_a_link_must_lead_to_the_server_when_the_verifier_knows_it():
    evil = linked(f"https://evil.example/#{FRAGMENT}")
    assert link_problems(evil) == []  # offline: the server is not known (the signature is)
    origins = server_origins("http://localhost:8000/")
    assert link_problems(evil, origins) == [
        "the link of citation S1 leads to https://evil.example:443, not to the server "
        "(http://127.0.0.1:8000, http://[::1]:8000, http://localhost:8000)"]
    # Loopback names reach the same server; another port or scheme does not.
    assert link_problems(linked(f"http://127.0.0.1:8000/#{FRAGMENT}"), origins) == []
    assert link_problems(linked(f"http://127.0.0.1:9000/#{FRAGMENT}"), origins)
    assert link_problems(linked(f"https://localhost:8000/#{FRAGMENT}"), origins)
    public = server_origins("https://KB.example.com")
    assert public == {"https://kb.example.com:443"}
    assert link_problems(linked(f"https://kb.example.com:443/x/#{FRAGMENT}"), public) == []
    assert origin_of("javascript:alert(1)") is None and origin_of("http://[::1]/") == \
        "http://[::1]:80"
