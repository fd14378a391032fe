"""Managed documents: each change a new snapshot through the normal pipeline, from the
embedding cache; refusals before anything is built; a failed build never goes live."""

import json
import shutil

import pytest

from citadel.config import Settings
from citadel.ingest import pipeline
from citadel.ingest.managed import (
    InvalidDocument,
    SourcesUnknown,
    Upload,
    add_documents,
    remove_document,
    safe_name,
)
from citadel.ingest.pipeline import ingest
from citadel.knowledge.snapshots import Catalog, SnapshotError
from citadel.retrieval.backends import get_backend
from citadel.retrieval.embedders.hashing import HashingEmbedder
from tests.helpers_kb import write_kb

KB = {
    "returns.md": "# Returns\n\nYou have 30 days to return an item for a refund.\n",
    "shipping.md": "# Shipping\n\nStandard delivery takes 3 to 5 working days.\n",
}
GROOMING = Upload("llama-grooming.md", b"# Llama grooming\n\nThe llama grooming service costs "
                                       b"45 pounds per visit.\n")


@pytest.fixture
def settings(tmp_path) -> Settings:
    settings = Settings(home=tmp_path / "home", embedder="hashing")
    ingest([write_kb(tmp_path / "kb", KB)], settings, embedder=HashingEmbedder(),
           progress=False)
    return settings


def chunks_of(settings: Settings, snapshot_id: str, document_id: str) -> int:
    index = get_backend(settings).open(snapshot_id, settings.dense_weight, settings.candidates)
    try:
        return len(index.chunks_of(document_id))
    finally:
        index.close()


def test_a_change_embeds_only_the_new_documents_chunks(settings):
    report = add_documents(settings, [GROOMING]).report
    new_chunks = chunks_of(settings, report.snapshot_id, "llama-grooming")
    assert new_chunks >= 1 and report.embedded == new_chunks
    assert report.cached == report.chunks - new_chunks > 0
    removed = remove_document(settings, "llama-grooming").report
    assert removed.embedded == 0  # the rest was embedded before: all from the cache


def test_a_failed_build_leaves_the_active_snapshot_serving(settings, monkeypatch):
    catalog = Catalog(settings.home)
    before = catalog.alias()

    def broken(*args, **kwargs):
        raise SnapshotError("validation failed (injected)")

    monkeypatch.setattr(pipeline, "validate_snapshot", broken)
    with pytest.raises(SnapshotError, match="injected"):
        add_documents(settings, [GROOMING])
    assert catalog.alias() == before
    assert [s.state for s in catalog.list() if s.snapshot_id != before] == ["failed"]


def test_the_manifest_records_the_upload_and_the_stored_file_is_named_by_its_hash(settings):
    change = add_documents(settings, [GROOMING, Upload("a.md", GROOMING.data)],
                           tenant="acme")
    sources = Catalog(settings.home).read_manifest(change.report.snapshot_id).sources
    assert [(m.document_id, m.name, m.tenant) for m in sources.managed] == [
        ("llama-grooming", "llama-grooming.md", "acme"), ("a", "a.md", "acme")]
    # One file for the same bytes, whatever the names.
    stored = list((settings.home / "documents").iterdir())
    assert [p.name for p in stored] == [sources.managed[0].stored_name]


def test_two_uploads_with_one_id_are_refused_before_anything_is_built(settings):
    before = Catalog(settings.home).alias()
    with pytest.raises(InvalidDocument, match="faq.md and faq.txt would both have"):
        add_documents(settings, [Upload("faq.md", b"# FAQ\n\nA.\n"),
                                 Upload("faq.txt", b"FAQ\n\nB.\n")])
    assert Catalog(settings.home).alias() == before


def test_an_upload_whose_front_matter_names_a_tenant_needs_one(settings):
    claim = Upload("private.md", b"---\ntenant: acme\n---\n# Private\n\nOnly for Acme.\n")
    with pytest.raises(InvalidDocument, match="upload it with a tenant"):
        add_documents(settings, [claim])
    assert add_documents(settings, [claim], tenant="acme").documents == ("private",)


def test_a_snapshot_without_recorded_sources_says_to_ingest_once(settings, tmp_path):
    catalog = Catalog(settings.home)
    path = catalog.manifest_path(catalog.alias())
    written = json.loads(path.read_text())
    del written["sources"]  # as a snapshot built before sources were recorded
    path.write_text(json.dumps(written))
    with pytest.raises(SourcesUnknown, match="run `citadel ingest`"):
        add_documents(settings, [GROOMING])
    # Ingesting the same corpus reuses the snapshot and records its sources.
    report = ingest([tmp_path / "kb"], settings, embedder=HashingEmbedder(), progress=False)
    assert report.reused
    assert add_documents(settings, [GROOMING]).report.changes.summary().startswith("1 added")


def test_a_folder_gone_since_the_last_build_is_named(settings, tmp_path):
    shutil.move(tmp_path / "kb", tmp_path / "moved")
    with pytest.raises(SourcesUnknown, match="kb.*where they are now"):
        add_documents(settings, [GROOMING])


@pytest.mark.parametrize("sent, kept", [
    ("../../etc/passwd", "passwd"),
    ("..\\..\\windows\\notes.md", "notes.md"),
    ("/abs/path/report.pdf", "report.pdf"),
    (".hidden.md", "hidden.md"),
    ("  spaced.md  ", "spaced.md"),
    ("bidi\u202egnp.md", "bidignp.md"),
    ("line\nbreak.md", "linebreak.md"),
    ("..", ""),
    ("x" * 300 + ".md", "x" * 197 + ".md"),
])
def test_a_client_file_name_becomes_a_plain_name(sent, kept):
    assert safe_name(sent) == kept
