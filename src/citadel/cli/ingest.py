from __future__ import annotations

from pathlib import Path

import click

from citadel.config import Settings


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--no-activate", is_flag=True, help="Build the snapshot but leave the alias.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def ingest(paths: tuple[Path, ...], no_activate: bool, quiet: bool) -> None:
    """Ingest files or folders (Markdown, text, HTML, PDF, Word) into a new snapshot and
    activate it."""
    from citadel.ingest.pipeline import IngestError
    from citadel.ingest.pipeline import ingest as run_ingest

    settings = Settings.load()
    try:
        report = run_ingest(
            list(paths), settings, progress=not quiet, activate=not no_activate,
            on_wait=lambda holder: click.echo(
                f"waiting: the same snapshot is being built by {holder}", err=True),
        )
    except IngestError as exc:
        for skip in exc.skipped:
            click.echo(f"skipped {skip.path}: {skip.reason}", err=True)
        raise
    for skip in report.skipped:
        click.echo(f"skipped {skip.path}: {skip.reason}", err=True)
    for chunk_id, reason in report.flagged:
        click.echo(f"flagged {chunk_id} (kept out of answers): {reason}", err=True)
    for old, new in report.retired:
        click.echo(f"retired {old}: superseded by {new}, never evidence in this snapshot",
                   err=True)
    verb = "reused" if report.reused else "built"
    click.echo(
        f"{verb} snapshot {report.snapshot_id}: {report.documents} documents, "
        f"{report.chunks} chunks in {report.seconds:.1f}s"
        + (f" ({report.embedded} embedded, {report.cached} from cache)" if not report.reused
           else "")
        + (f" ({len(report.skipped)} files skipped)" if report.skipped else "")
    )
    if report.activated:
        click.echo(f"active snapshot is now {report.snapshot_id}")
