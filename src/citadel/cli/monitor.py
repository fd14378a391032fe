"""`citadel monitor`: citation, abstention, drop and conflict rates per day and week, alerts."""

from __future__ import annotations

import datetime as dt
import sys

import click


@click.command()
@click.option("--weeks", type=click.IntRange(1), default=8, show_default=True,
              help="Window: this ISO week and the N-1 before it (UTC).")
@click.option("--max-citation-drop", type=click.FloatRange(0, 1), default=0.10,
              show_default=True, envvar="CITADEL_MONITOR_MAX_CITATION_DROP",
              help="Alert when the citation rate falls more than this (absolute) week on week.")
@click.option("--low-authority", type=click.FloatRange(0, 1), default=0.5, show_default=True,
              envvar="CITADEL_MONITOR_LOW_AUTHORITY",
              help="Documents with authority below this are low-authority.")
@click.option("--max-document-share", type=click.FloatRange(0, 1), default=0.30,
              show_default=True, envvar="CITADEL_MONITOR_MAX_DOCUMENT_SHARE",
              help="Alert when one low-authority document supplies more of a week's citations.")
@click.option("--min-requests", type=click.IntRange(1), default=20, show_default=True,
              help="Weeks with fewer requests are not compared.")
@click.option("--min-citations", type=click.IntRange(1), default=10, show_default=True,
              help="Weeks with fewer citations are not checked for dominance.")
@click.option("--check", is_flag=True, help="Exit with status 2 when there is an alert.")
@click.option("--json", "as_json", is_flag=True, help="The report as JSON.")
def monitor(weeks: int, max_citation_drop: float, low_authority: float,
            max_document_share: float, min_requests: int, min_citations: int, check: bool,
            as_json: bool) -> None:
    """Report answer quality from the request log, and alert on regressions."""
    from citadel.cli.logs import open_log
    from citadel.observability.monitoring import Thresholds, build_report, render, week_start

    thresholds = Thresholds(max_citation_drop=max_citation_drop, low_authority=low_authority,
                            max_document_share=max_document_share, min_requests=min_requests,
                            min_citations=min_citations)
    since = week_start(dt.datetime.now(dt.UTC)) - dt.timedelta(weeks=weeks - 1)
    log = open_log()
    if not log.path.is_file():
        click.echo(f"no request log yet at {log.path}: it fills as questions are answered",
                   err=True)
    report = build_report(log.records(since=since), thresholds, since=since)
    click.echo(report.model_dump_json(indent=2) if as_json else render(report))
    if check and report.alerts:
        sys.exit(2)
