"""`citadel docs`: list, add and remove documents; each change is a new validated snapshot,
made active (`citadel.ingest.managed`; the same as `/v1/documents` over HTTP)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from citadel.cli.terminal import printable

if TYPE_CHECKING:
    from citadel.ingest.managed import Change


@click.group()
def docs() -> None:
    """Manage the documents of the knowledge base: each change builds a new snapshot from
    the active one's sources plus or minus the documents, validates it and activates it."""


@docs.command("list")
@click.option("--tenant", default=None,
              help="Only this tenant's documents (an empty value: only the public ones).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def list_(tenant: str | None, as_json: bool) -> None:
    """The active snapshot's documents: id, tenant, authority, chunks, flagged chunks, when
    each last changed, and its source (`+` marks an uploaded one)."""
    from citadel.config import Settings
    from citadel.knowledge.document_list import list_documents
    from citadel.knowledge.snapshots import Catalog, SnapshotError
    from citadel.retrieval.backends import get_backend

    settings = Settings.load()
    catalog = Catalog(settings.home)
    active = catalog.alias()
    manifest = catalog.read_manifest(active) if active else None
    if active is None or manifest is None:
        raise SnapshotError("no active snapshot: run `citadel ingest PATH` or "
                            "`citadel docs add FILE` first")
    index = get_backend(settings).open(active, settings.dense_weight, settings.candidates)
    try:
        page = list_documents(index, manifest, tenant=tenant,
                              limit=max(1, len(manifest.documents)))
    finally:
        index.close()
    if as_json:
        click.echo(json.dumps(page.model_dump(mode="json"), indent=2, ensure_ascii=True))
        return
    click.echo(f"snapshot {active}: {page.total} documents")
    click.echo(f"  {'ID':<32} {'TENANT':<12} {'AUTH':>4} {'CHUNKS':>6} {'FLAGGED':>7}  "
               f"{'UPDATED':<19}  SOURCE")
    for d in page.documents:
        click.echo(f"{'+' if d.uploaded else ' '} {printable(d.document_id):<32} "
                   f"{printable(d.tenant or '-'):<12} {d.authority:>4.2f} {d.chunks:>6} "
                   f"{d.flagged:>7}  {d.updated_at[:19].replace('T', ' '):<19}  "
                   f"{printable(d.source)}")


@docs.command("add")
@click.argument("files", nargs=-1, required=True,
                type=click.Path(path_type=Path, exists=True, dir_okay=False))
@click.option("--authority", type=click.FloatRange(0.0, 1.0), default=None,
              help="How far the documents are trusted against others (0 to 1; default 0.5).")
@click.option("--tenant", default=None,
              help="Whose documents they are: only that tenant's API keys retrieve them.")
@click.option("--supersedes", default=None,
              help="The id of the document they replace as evidence.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def add(files: tuple[Path, ...], authority: float | None, tenant: str | None,
        supersedes: str | None, quiet: bool) -> None:
    """Add FILES (Markdown, text, HTML, PDF, Word), kept in CITADEL_HOME/documents; a file
    whose name maps to an existing document's id replaces it."""
    from citadel.config import Settings
    from citadel.ingest.managed import Builders, TooLarge, Upload, add_documents

    settings = Settings.load()
    uploads = []
    for path in files:
        size = path.stat().st_size  # a missing file: FileNotFoundError, said in one line
        if size > settings.max_file_bytes:
            raise TooLarge(f"{path} is {size:,} bytes, over the limit of "
                           f"{settings.max_file_bytes:,} (max_file_bytes)")
        uploads.append(Upload(path.name, path.read_bytes()))
    change = add_documents(settings, uploads, authority=authority, tenant=tenant,
                           supersedes=supersedes, builders=Builders(progress=not quiet))
    _said(f"added {', '.join(change.documents)}", change)


@docs.command("remove")
@click.argument("document_id")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def remove(document_id: str, quiet: bool) -> None:
    """Remove the document DOCUMENT_ID (as `citadel docs list` shows it). An uploaded file is
    dropped; a file of an ingested folder is left where it is, and comes back the next time
    that folder is ingested."""
    from citadel.config import Settings
    from citadel.ingest.managed import Builders, remove_document

    change = remove_document(Settings.load(), document_id,
                             builders=Builders(progress=not quiet))
    _said(f"removed {printable(document_id)}", change)


def _said(what: str, change: Change) -> None:
    """As `citadel ingest` says it: the snapshot, what changed, the alias."""
    from citadel.cli.ingest import changes_line

    report = change.report
    for skip in report.skipped:
        click.echo(f"skipped {printable(skip.path)}: {printable(skip.reason)}", err=True)
    made = ("reused snapshot" if report.reused else "built snapshot") + f" {report.snapshot_id}"
    cache = "" if report.reused else f" ({report.embedded} embedded, {report.cached} from cache)"
    click.echo(f"{what}: {made}{cache}")
    click.echo(changes_line(report.changes))
    if report.activated:
        click.echo(f"active snapshot is now {report.snapshot_id}")
