from __future__ import annotations

import time

import click

from citadel.cli.ingest import print_report, say_waiting, sources


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--interval", type=click.FloatRange(min=1.0), default=3600.0, show_default=True,
              help="Seconds between two rounds.")
@click.option("--once", is_flag=True, help="One round, then exit (non-zero if it failed).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bars.")
def sync(paths: tuple[str, ...], interval: float, once: bool, quiet: bool) -> None:
    """Keep the knowledge base in step with files, folders and websites: ingest them again
    every --interval seconds. A round builds a new snapshot only when something changed
    (websites are re-fetched with conditional requests), and the alias moves only to a
    snapshot that validated; a failed round keeps the served one."""
    from citadel.config import Settings
    from citadel.ingest.sync import Round
    from citadel.ingest.sync import sync as run_sync

    def report(round_: Round) -> None:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        if round_.report is None:
            click.echo(f"{stamp} round failed, the served snapshot stays: {round_.error}",
                       err=True)
        elif round_.report.reused and not round_.report.activated:
            click.echo(f"{stamp} unchanged: snapshot {round_.report.snapshot_id}")
        else:
            click.echo(f"{stamp} changed:")
            print_report(round_.report, paths, show_flagged=False)

    run_sync(sources(paths), Settings.load(), interval=interval, once=once, on_round=report,
             progress=not quiet, on_wait=say_waiting)
