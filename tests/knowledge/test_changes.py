"""What changed between two snapshots: pure on document lists, then as an ingest records it
(report, manifest) and `citadel ingest` says it."""

import json

from click.testing import CliRunner

from citadel.cli import main
from citadel.config import Settings
from citadel.ingest.pipeline import ingest
from citadel.knowledge.changes import ChangedDocument, Changes, document_changes
from citadel.knowledge.snapshots import Catalog, DocumentEntry, Manifest
from citadel.retrieval.embedders.hashing import HashingEmbedder
from tests.helpers_kb import write_kb


def entry(document_id: str, sha: str) -> DocumentEntry:
    return DocumentEntry(document_id=document_id, source=f"{document_id}.md",
                         content_sha256=sha)


def ids(docs: tuple[ChangedDocument, ...]) -> list[str]:
    return [d.document_id for d in docs]


def test_added_changed_and_removed_by_id_and_content_hash():
    before = [entry("faq", "1"), entry("returns", "2"), entry("old", "3")]
    after = [entry("returns", "2b"), entry("faq", "1"), entry("new", "4"), entry("alpha", "5")]
    found = document_changes(before, after, since="kb-1")
    assert ids(found.added) == ["alpha", "new"]  # sorted by id
    assert ids(found.changed) == ["returns"]
    assert ids(found.removed) == ["old"] and found.removed[0].source == "old.md"
    assert found.since == "kb-1" and not found.empty


def test_nothing_before_means_everything_is_added():
    found = document_changes(None, [entry("a", "1"), entry("b", "2")])
    assert ids(found.added) == ["a", "b"] and found.since is None
    assert document_changes([entry("a", "1")], [entry("a", "1")]).empty


def test_the_summary_counts_every_kind_and_names_a_bounded_few():
    found = document_changes([entry("gone", "0"), entry("same", "1")],
                             [entry(f"d{i}", str(i)) for i in range(7)] + [entry("same", "x")])
    assert found.summary(limit=3) == ("7 added (d0, d1, d2 and 4 more), 1 changed (same), "
                                      "1 removed (gone)")
    assert Changes().summary() == "0 added, 0 changed, 0 removed"


def test_an_ingest_records_its_changes_in_the_report_and_the_manifest(tmp_path):
    settings = Settings(home=tmp_path / "home", embedder="hashing")
    kb = write_kb(tmp_path / "kb", {"a.md": "# A\n\nAlpha text.\n", "b.md": "# B\n\nBeta.\n"})
    first = ingest([kb], settings, embedder=HashingEmbedder(), progress=False)
    assert ids(first.changes.added) == ["a", "b"]
    (kb / "b.md").write_text("# B\n\nBeta, changed.\n")
    (kb / "a.md").unlink()
    (kb / "c.md").write_text("# C\n\nGamma.\n")
    second = ingest([kb], settings, embedder=HashingEmbedder(), progress=False)
    assert second.changes.summary() == "1 added (c), 1 changed (b), 1 removed (a)"
    manifest = Catalog(settings.home).read_manifest(second.snapshot_id)
    assert manifest.changes == second.changes and manifest.changes.since == first.snapshot_id
    assert manifest.sources.paths == (str(kb),)
    # Each document knows when its text last changed: c and b now, nothing else here.
    assert {d.document_id: d.updated_at for d in manifest.documents} == {
        "b": manifest.created_at, "c": manifest.created_at}


def test_an_unchanged_document_keeps_when_it_last_changed(tmp_path):
    settings = Settings(home=tmp_path / "home", embedder="hashing")
    kb = write_kb(tmp_path / "kb", {"a.md": "# A\n\nAlpha text.\n", "b.md": "# B\n\nBeta.\n"})
    first = ingest([kb], settings, embedder=HashingEmbedder(), progress=False)
    (kb / "b.md").write_text("# B\n\nBeta, changed.\n")
    second = ingest([kb], settings, embedder=HashingEmbedder(), progress=False)
    catalog = Catalog(settings.home)
    old, new = catalog.read_manifest(first.snapshot_id), catalog.read_manifest(second.snapshot_id)
    updated = {d.document_id: d.updated_at for d in new.documents}
    assert updated == {"a": old.created_at, "b": new.created_at}


def test_a_manifest_written_before_changes_were_recorded_still_reads(tmp_path):
    settings = Settings(home=tmp_path / "home", embedder="hashing")
    kb = write_kb(tmp_path / "kb", {"a.md": "# A\n\nAlpha text.\n"})
    report = ingest([kb], settings, embedder=HashingEmbedder(), progress=False)
    catalog = Catalog(settings.home)
    path = catalog.manifest_path(report.snapshot_id)
    old = json.loads(path.read_text())
    for later in ("changes", "sources"):
        del old[later]
    for doc in old["documents"]:
        del doc["updated_at"]
    path.write_text(json.dumps(old))
    manifest = catalog.read_manifest(report.snapshot_id)
    assert isinstance(manifest, Manifest) and manifest.changes is manifest.sources is None
    assert manifest.updated("a") == manifest.created_at


def test_citadel_ingest_says_what_changed(tmp_path):
    kb = write_kb(tmp_path / "kb", {"a.md": "# A\n\nAlpha text.\n"})
    env = {"CITADEL_HOME": str(tmp_path / "home"), "CITADEL_EMBEDDER": "hashing"}
    first = CliRunner().invoke(main, ["ingest", "-q", str(kb)], env=env)
    assert "changes: 1 added (a), 0 changed, 0 removed" in first.output
    (kb / "b.md").write_text("# B\n\nBeta.\n")
    second = CliRunner().invoke(main, ["ingest", "-q", str(kb)], env=env)
    assert second.exit_code == 0, second.output
    since = Catalog(tmp_path / "home").history()[0]
    assert f"changes since {since}: 1 added (b), 0 changed, 0 removed" in second.output
