from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from citadel.ingest.pipeline import IngestReport
    from citadel.knowledge.changes import Changes


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--no-activate", is_flag=True, help="Build the snapshot but leave the alias.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bars.")
@click.option("--show-flagged", is_flag=True,
              help="List every chunk flagged for planted instructions, with the reasons.")
def ingest(paths: tuple[str, ...], no_activate: bool, quiet: bool, show_flagged: bool) -> None:
    """Ingest files, folders (Markdown, text, HTML, PDF, Word) and websites (an http(s) page
    to crawl from, or a sitemap.xml) into a new snapshot and activate it."""
    from citadel.config import Settings
    from citadel.ingest.pipeline import IngestError
    from citadel.ingest.pipeline import ingest as run_ingest

    settings = Settings.load()
    try:
        report = run_ingest(sources(paths), settings, progress=not quiet,
                            activate=not no_activate, on_wait=say_waiting)
    except IngestError as exc:
        for skip in exc.skipped:
            click.echo(f"skipped {skip.path}: {skip.reason}", err=True)
        raise
    print_report(report, paths, show_flagged)


def sources(paths: tuple[str, ...]) -> list[Path | str]:
    """The arguments as the pipeline takes them: a URL stays text (a `Path` would fold its
    `//`), anything else is a path."""
    from citadel.ingest.web.urls import is_url

    return [p if is_url(p) else Path(p) for p in paths]


def say_waiting(holder: str) -> None:
    click.echo(f"waiting: another ingest or document change is running ({holder})", err=True)


def print_report(report: IngestReport, paths: tuple[str, ...], show_flagged: bool) -> None:
    """What an ingest did: skipped and retired documents, flags, the snapshot, what changed
    since the snapshot active before, and the alias."""
    for skip in report.skipped:
        click.echo(f"skipped {skip.path}: {skip.reason}", err=True)
    if report.ignored_front_matter:
        click.echo(ignored_summary(report.ignored_front_matter), err=True)
    if show_flagged:
        for chunk_id, reason in report.flagged:
            click.echo(f"flagged {chunk_id}: {reason}", err=True)
    for old, new in report.retired:
        click.echo(f"retired {old}: superseded by {new}, never evidence in this snapshot",
                   err=True)
    verb = "reused" if report.reused else "built"
    click.echo(
        f"{verb} snapshot {report.snapshot_id}: {report.documents} documents, "
        f"{report.chunks} chunks in {report.seconds:.1f}s"
        + (f" ({report.embedded} embedded, {report.cached} from cache)" if not report.reused
           else "")
        + (f" ({len(report.skipped)} skipped)" if report.skipped else "")
    )
    click.echo(changes_line(report.changes))
    if report.activated:
        click.echo(f"active snapshot is now {report.snapshot_id}")
    if report.flagged:
        click.echo(flagged_summary(report.flagged, paths, listed=show_flagged), err=True)


def changes_line(changes: Changes) -> str:
    """`changes since kb-…: 1 added (faq), 0 changed, 0 removed`."""
    since = f" since {changes.since}" if changes.since else ""
    return f"changes{since}: {changes.summary()}"


def flagged_summary(flagged: tuple[tuple[str, str], ...], paths: tuple[str, ...],
                    listed: bool) -> str:
    """What injection screening found, in words: how many chunks of which documents, what
    that means for answers (search never returns them: `Chunk.retrievable`), how to see
    them."""
    documents = sorted({chunk_id.split("#", 1)[0] for chunk_id, _ in flagged})
    named = ", ".join(documents[:5]) + (f" and {len(documents) - 5} more"
                                        if len(documents) > 5 else "")
    see = ("" if listed else " To list them with the reasons: citadel ingest "
           + " ".join(shlex.quote(str(p)) for p in paths) + " --show-flagged")
    return (f"screening: {_count(len(flagged), 'chunk')} in {_count(len(documents), 'document')}"
            f" ({named}) look like planted instructions (text addressed to an AI assistant, "
            "such as \"ignore previous instructions\", or text a web page hides from its "
            "readers). They are stored but kept out of every answer's context (never retrieved, so "
            f"they take no answer's place): never quoted, cited or followed.{see}")


def ignored_summary(ignored: tuple[tuple[str, tuple[str, ...]], ...]) -> str:
    """Markdown files whose front matter names fields only the operator sets, in one line."""
    fields = sorted({f for _, names in ignored for f in names})
    paths = [path for path, _ in ignored]
    named = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
    return (f"note: the front matter of {_count(len(paths), 'Markdown file')} ({named}) sets "
            f"{', '.join(fields)}: ignored, since only the operator's citadel-sources.toml at "
            "the ingest root sets them (a file must not vouch for itself)")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
