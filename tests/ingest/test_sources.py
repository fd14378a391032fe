"""A source set's documents: the folders less what was removed, plus the uploads, which
replace a folder's document of the same id and carry the admin's metadata."""

from citadel.config import Settings
from citadel.ingest.managed import Upload, store
from citadel.ingest.sources import load_sources
from citadel.knowledge.source_set import SourceSet
from tests.helpers_kb import write_kb


def test_folders_less_excluded_plus_uploads_with_their_metadata(tmp_path):
    settings = Settings(home=tmp_path / "home", embedder="hashing")
    kb = write_kb(tmp_path / "kb", {"a.md": "# A\n\nOld a.\n", "b.md": "# B\n\nB.\n",
                                    "c.md": "# C\n\nC.\n"})
    new_a = store(settings, Upload("A.md", b"# A\n\nNew a.\n"), authority=0.9, tenant="acme")
    sources = SourceSet(paths=(str(kb),), excluded=("b",), managed=(new_a,))
    corpus = load_sources(sources, settings)
    docs = {d.document_id: d for d in corpus.documents}
    assert set(docs) == {"a", "c"}
    assert "New a." in docs["a"].text and docs["a"].source == "A.md"
    assert (docs["a"].authority, docs["a"].tenant) == (0.9, "acme")


def test_an_upload_that_cannot_be_read_is_skipped_with_its_reason(tmp_path):
    settings = Settings(home=tmp_path / "home", embedder="hashing")
    managed = store(settings, Upload("gone.md", b"# Gone\n\nSoon.\n"))
    managed.path(settings.home).unlink()
    corpus = load_sources(SourceSet(managed=(managed,)), settings)
    assert corpus.documents == ()
    assert [(s.path, s.reason.split(":")[0]) for s in corpus.skipped] == [("gone.md",
                                                                           "unreadable")]
