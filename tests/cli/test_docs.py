"""`citadel docs list|add|remove`, through the real click commands: each change a new active
snapshot; bad input a one-line error and a non-zero exit, never a traceback."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from citadel.cli import main
from citadel.config import Settings
from citadel.engine import Engine
from citadel.ingest.pipeline import ingest
from citadel.knowledge.snapshots import Catalog
from citadel.retrieval.embedders.hashing import HashingEmbedder
from tests.helpers_kb import write_kb

KB = {
    "returns.md": "# Returns\n\nYou have 30 days to return an item for a refund.\n",
    "shipping.md": "# Shipping\n\nStandard delivery takes 3 to 5 working days.\n",
}
QUESTION = "How much does the llama grooming service cost?"


def run(home: Path, *args: str, **env: str):
    result = CliRunner().invoke(main, list(args), env={
        "CITADEL_HOME": str(home), "CITADEL_EMBEDDER": "hashing", **env})
    assert "Traceback" not in result.output
    return result


@pytest.fixture
def home(tmp_path) -> Path:
    home = tmp_path / "home"
    ingest([write_kb(tmp_path / "kb", KB)], Settings(home=home, embedder="hashing"),
           embedder=HashingEmbedder(), progress=False)
    return home


def listed(home: Path, *args: str) -> list[dict]:
    result = run(home, "docs", "list", "--json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["documents"]


def cited(home: Path, tenant: str | None = None) -> set[str]:
    engine = Engine.open(Settings(home=home, embedder="hashing"), embedder=HashingEmbedder())
    try:
        return {c.document_id for c in engine.answer(QUESTION, tenant=tenant).citations}
    finally:
        engine.close()


def test_add_list_remove_each_a_new_active_snapshot(home, tmp_path):
    before = Catalog(home).alias()
    file = tmp_path / "Llama Grooming.md"
    file.write_text("# Llama grooming\n\nThe llama grooming service costs 45 pounds per visit."
                    "\n")
    result = run(home, "docs", "add", "-q", str(file), "--tenant", "acme",
                 "--authority", "0.8")
    assert result.exit_code == 0, result.output
    added = Catalog(home).alias()
    assert added != before
    assert f"added llama-grooming: built snapshot {added} (1 embedded, 2 from cache)" \
        in result.output
    assert f"changes since {before}: 1 added (llama-grooming), 0 changed, 0 removed" \
        in result.output
    assert f"active snapshot is now {added}" in result.output
    rows = {d["document_id"]: d for d in listed(home)}
    assert rows["llama-grooming"]["tenant"] == "acme" and rows["llama-grooming"]["uploaded"]
    assert rows["llama-grooming"]["authority"] == 0.8
    assert [d["document_id"] for d in listed(home, "--tenant", "acme")] == ["llama-grooming"]
    assert cited(home, "acme") == {"llama-grooming"} and "llama-grooming" not in cited(home)
    table = run(home, "docs", "list").output.splitlines()
    assert table[0] == f"snapshot {added}: 3 documents"
    assert table[1].split()[:5] == ["ID", "TENANT", "AUTH", "CHUNKS", "FLAGGED"]
    assert any(line.startswith("+ llama-grooming") for line in table)

    result = run(home, "docs", "remove", "-q", "llama-grooming")
    assert result.exit_code == 0, result.output
    # The snapshot without it is the first one again: reused, not rebuilt.
    assert f"removed llama-grooming: reused snapshot {before}\n" in result.output
    assert "0 added, 0 changed, 1 removed (llama-grooming)" in result.output
    assert {d["document_id"] for d in listed(home)} == {"returns", "shipping"}
    # A folder's document is excluded, and comes back when the folder is ingested again.
    assert run(home, "docs", "remove", "-q", "returns").exit_code == 0
    assert {d["document_id"] for d in listed(home)} == {"shipping"}
    result = run(home, "ingest", "-q", str(tmp_path / "kb"))
    assert "changes since" in result.output and "1 added (returns)" in result.output
    assert {d["document_id"] for d in listed(home)} == {"returns", "shipping"}


def test_uploads_persist_across_a_later_ingest(home, tmp_path):
    file = tmp_path / "grooming.txt"
    file.write_text("Llama grooming costs 45 pounds per visit.\n")
    assert run(home, "docs", "add", "-q", str(file)).exit_code == 0
    result = run(home, "ingest", "-q", str(tmp_path / "kb"))
    assert result.exit_code == 0, result.output
    assert {d["document_id"] for d in listed(home)} == {"grooming", "returns", "shipping"}


@pytest.mark.parametrize("args, message", [
    (["docs", "add", "missing.md"], "does not exist"),
    (["docs", "add", "{tmp}/tool.exe"], "unsupported file type '.exe'"),
    (["docs", "add", "{tmp}/big.md"], "over the limit of 100 (max_file_bytes)"),
    (["docs", "add", "{tmp}/ok.md", "--authority", "2"], "not in the range"),
    (["docs", "add", "{tmp}/ok.md", "--supersedes", "retruns"], "did you mean 'returns'"),
    (["docs", "remove", "nothing-here"], "no document 'nothing-here'"),
    (["docs", "remove", "returns"], None),  # fine: one document stays
])
def test_bad_input_is_one_line_and_a_non_zero_exit(home, tmp_path, args, message):
    (tmp_path / "tool.exe").write_bytes(b"MZ\x90")
    (tmp_path / "big.md").write_text("# Big\n\n" + "word " * 100)
    (tmp_path / "ok.md").write_text("# Fine\n\nA fine document.\n")
    before = Catalog(home).alias()
    result = run(home, *[a.format(tmp=tmp_path) for a in args], CITADEL_MAX_FILE_BYTES="100")
    if message is None:
        assert result.exit_code == 0, result.output
        return
    assert result.exit_code != 0
    assert message in result.output, result.output
    assert Catalog(home).alias() == before


def test_the_last_document_cannot_be_removed(home):
    assert run(home, "docs", "remove", "-q", "returns").exit_code == 0
    result = run(home, "docs", "remove", "-q", "shipping")
    assert result.exit_code == 1 and "needs at least one" in result.output


def test_list_without_a_knowledge_base_says_what_to_do(tmp_path):
    result = run(tmp_path / "empty", "docs", "list")
    assert result.exit_code == 1 and "citadel ingest PATH" in result.output


def test_a_document_added_after_a_website_ingest_keeps_the_sites_pages(help_site, tmp_path):
    home = tmp_path / "home"
    web = {"CITADEL_FETCH_ALLOW_PRIVATE": "1", "CITADEL_FETCH_DELAY": "0"}
    first = run(home, "ingest", "-q", help_site.url("/sitemap.xml"), **web)
    assert first.exit_code == 0, first.output
    pages = {d["document_id"]: d["source"] for d in listed(home)}
    assert len(pages) == 3 and all(s.startswith(help_site.base) for s in pages.values())
    file = tmp_path / "Llama Grooming.md"
    file.write_text("# Llama grooming\n\nThe llama grooming service costs 45 pounds per visit."
                    "\n")
    fetched = len(help_site.requests)
    result = run(home, "docs", "add", "-q", str(file), **web)
    assert result.exit_code == 0, result.output
    assert "1 added (llama-grooming), 0 changed, 0 removed" in result.output
    assert {d["document_id"]: d["source"] for d in listed(home)} == {
        **pages, "llama-grooming": "Llama Grooming.md"}
    assert cited(home) == {"llama-grooming"}
    # The site was read again through the fetch cache: each page only asked "changed since?".
    asked = [r for r in help_site.requests[fetched:] if r.path != "/robots.txt"]
    assert asked and all("if-none-match" in r.headers for r in asked)
    # A page is removed as a file of a folder is: excluded, the rest kept.
    page = next(iter(pages))
    assert run(home, "docs", "remove", "-q", page, **web).exit_code == 0
    assert {d["document_id"] for d in listed(home)} == (set(pages) - {page}) | {
        "llama-grooming"}
