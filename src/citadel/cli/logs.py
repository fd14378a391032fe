"""`citadel logs`: list request-log records; `citadel logs show ID`: one, with its response."""

from __future__ import annotations

import datetime as dt

import click

from citadel.cli.terminal import json_line, printable
from citadel.config import Settings
from citadel.observability.request_log import RequestLog, RequestRecord, parse_since


def since_option(value: str | None) -> dt.datetime | None:
    if value is None:
        return None
    try:
        return parse_since(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--since") from None


def open_log() -> RequestLog:
    settings = Settings.load()
    return RequestLog.from_settings(settings)


def flags(r: RequestRecord) -> str:
    out = []
    if r.abstained:
        out.append("abstained")
    if r.conflict:
        out.append("conflict")
    if r.degraded:
        out.append("degraded")
    if not r.retrieval_ok:
        out.append("retrieval-failed")
    if r.rerank_ran:
        out.append("reranked")
    return ",".join(out) or "ok"


def summary_line(r: RequestRecord) -> str:
    question = r.question if r.question is not None else f"sha256:{r.question_sha256[:12]}"
    if len(question) > 60:
        question = question[:57] + "..."
    total = r.latencies_ms.get("total", 0.0)
    # Escaped after cutting, so an escape sequence is never cut into a live fragment.
    return (f"{r.time:%Y-%m-%d %H:%M:%S}  {printable(r.request_id)}  "
            f"{r.citations_emitted:>2} cit  {total:>7.1f} ms  {flags(r):<20} "
            f"{printable(question)}")


@click.group(invoke_without_command=True)
@click.option("--since", default=None, help="7d, 24h, 30m, 2w or an ISO date/time (UTC).")
@click.option("--degraded/--not-degraded", default=None, help="Only (or no) degraded answers.")
@click.option("--abstained/--answered", default=None, help="Only abstentions (or answers).")
@click.option("--limit", type=click.IntRange(1), default=50, show_default=True,
              help="Most recent records shown.")
@click.option("--json", "as_json", is_flag=True, help="One JSON record per line.")
@click.pass_context
def logs(ctx: click.Context, since: str | None, degraded: bool | None, abstained: bool | None,
         limit: int, as_json: bool) -> None:
    """List answered requests from the request log (<home>/requests.sqlite), oldest first."""
    if ctx.invoked_subcommand is not None:
        return
    log = open_log()
    if not log.path.is_file():
        click.echo(f"no request log yet at {log.path}: it fills as questions are answered",
                   err=True)
        return
    records = log.records(since=since_option(since), degraded=degraded, abstained=abstained,
                          limit=limit)
    for r in records:
        click.echo(json_line(r.model_dump(mode="json", exclude={"response"})) if as_json
                   else summary_line(r))
    if not as_json:
        click.echo(f"{len(records)} record(s)" + (f" (the latest {limit})"
                                                  if len(records) == limit else ""), err=True)


@logs.command()
@click.argument("request_id")
@click.option("--json", "as_json", is_flag=True, help="The whole record as JSON.")
def show(request_id: str, as_json: bool) -> None:
    """Show one request's record and its full response."""
    log = open_log()
    record = log.get(request_id)
    if record is None:
        raise click.ClickException(f"no request {request_id!r} in {log.path}")
    if as_json:
        click.echo(json_line(record.model_dump(mode="json"), indent=2))
        return
    body = record.model_dump(mode="json", exclude={"response"})
    for key, value in body.items():
        shown = json_line(value) if isinstance(value, list | dict) else printable(str(value))
        click.echo(f"{key}: {shown}")
    click.echo("response:")
    click.echo(json_line(record.response, indent=2))
