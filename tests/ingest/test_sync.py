"""Sync: ingest again and again; a new snapshot only when something changed, and a failed
round keeps the served snapshot."""

from __future__ import annotations

import pytest

from citadel.ingest.managed import Builders, Upload, add_documents
from citadel.ingest.pipeline import ingest
from citadel.ingest.sources import WebsiteUnreadable
from citadel.ingest.sync import Round, sync
from citadel.knowledge.snapshots import Catalog
from citadel.retrieval.embedders.hashing import HashingEmbedder
from tests.ingest.web.help_centre import HTML, SHIPPING, Route, article, web_settings


class Stop(Exception):
    pass


def test_rounds_build_only_when_the_site_changed_and_a_failed_round_keeps_the_served_one(
        help_site, tmp_path):
    settings = web_settings(tmp_path / "home")
    rounds: list[Round] = []
    edits = iter([
        lambda: None,  # round 2: nothing changed
        lambda: help_site.page("/help/shipping",  # round 3: a page changed
                               article("Shipping", SHIPPING.replace("£9.95", "£12.50"))),
        lambda: help_site.routes.update(  # round 4: the site is down
            {"/robots.txt": Route(b"", 503, {"Content-Type": HTML})}),
    ])
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        edit = next(edits, None)
        if edit is None:
            raise Stop
        edit()

    with pytest.raises(Stop):
        sync([help_site.url("/")], settings, interval=60, on_round=rounds.append, sleep=sleep,
             embedder=HashingEmbedder(), progress=False)
    first, same, changed, failed = rounds
    assert waits == [60, 60, 60, 60]
    assert not first.report.reused and first.report.activated
    assert same.report.reused and same.report.snapshot_id == first.report.snapshot_id
    assert not same.report.activated
    assert changed.report.snapshot_id != first.report.snapshot_id
    assert changed.report.activated and changed.report.embedded == 1
    assert failed.report is None and failed.error.startswith("no page of ")
    assert Catalog(settings.home).alias() == changed.report.snapshot_id


def test_once_runs_one_round_and_raises_its_failure(site, tmp_path):
    site.routes["/"] = Route(b"", 500, {"Content-Type": HTML})
    with pytest.raises(WebsiteUnreadable, match="nothing was built"):
        sync([site.url("/")], web_settings(tmp_path / "home"), interval=60, once=True,
             on_round=lambda r: None, embedder=HashingEmbedder(), progress=False)


def test_a_round_keeps_the_uploaded_documents(help_site, tmp_path):
    settings = web_settings(tmp_path / "home")
    rounds: list[Round] = []

    def round_() -> None:
        sync([help_site.url("/sitemap.xml")], settings, interval=60, once=True,
             on_round=rounds.append, embedder=HashingEmbedder(), progress=False)

    round_()
    added = add_documents(settings, [Upload("grooming.md", b"# Grooming\n\n45 pounds.\n")],
                          builders=Builders(embedder=HashingEmbedder()))
    round_()
    assert rounds[-1].report.snapshot_id == added.report.snapshot_id
    assert rounds[-1].report.reused and not rounds[-1].report.activated
    manifest = Catalog(settings.home).active_manifest()
    assert "grooming" in {d.document_id for d in manifest.documents}
    assert manifest.sources.websites == (help_site.url("/sitemap.xml"),)


def test_a_site_that_cannot_be_read_beside_a_folder_builds_nothing(help_site, tmp_path):
    # Its pages would silently leave the snapshot served: the folder alone is not built.
    folder = tmp_path / "kb"
    folder.mkdir()
    (folder / "hours.md").write_text("# Hours\n\nWe are open Monday to Friday, 9am to 5pm.\n")
    settings = web_settings(tmp_path / "home")
    served = ingest([folder, help_site.url("/")], settings, embedder=HashingEmbedder(),
                    progress=False)
    help_site.routes.update({"/robots.txt": Route(b"", 503, {"Content-Type": HTML})})
    with pytest.raises(WebsiteUnreadable, match="snapshot served is unchanged"):
        ingest([folder, help_site.url("/")], settings, embedder=HashingEmbedder(),
               progress=False)
    assert Catalog(settings.home).alias() == served.snapshot_id
