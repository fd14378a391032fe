"""`citadel logs`: list request-log records; `citadel logs show ID`: one, with its response.

Records are known by the server's request id (unique, in the `X-Request-ID` response header
and the answer's trace); the id a client sent is kept as `client_request_id` and finds them
too (`--client-request-id`, or `show` when no server id matches)."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

import click

from citadel.cli.terminal import json_line, printable

if TYPE_CHECKING:
    from citadel.observability.request_log import RequestLog, RequestRecord


def since_option(value: str | None) -> dt.datetime | None:
    from citadel.observability.request_log import parse_since

    if value is None:
        return None
    try:
        return parse_since(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--since") from None


def open_log() -> RequestLog:
    from citadel.config import Settings
    from citadel.observability.request_log import RequestLog

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
    client = f" ({printable(r.client_request_id)})" if r.client_request_id else ""
    return (f"{r.time:%Y-%m-%d %H:%M:%S}  {printable(r.request_id)}{client}  "
            f"{r.citations_emitted:>2} cit  {total:>7.1f} ms  {flags(r):<20} "
            f"{printable(question)}")


@click.group(invoke_without_command=True)
@click.option("--since", default=None, help="7d, 24h, 30m, 2w or an ISO date/time (UTC).")
@click.option("--degraded/--not-degraded", default=None, help="Only (or no) degraded answers.")
@click.option("--abstained/--answered", default=None, help="Only abstentions (or answers).")
@click.option("--client-request-id", default=None,
              help="Only requests the client sent with this id (X-Client-Request-ID or "
                   "X-Request-ID).")
@click.option("--limit", type=click.IntRange(1), default=50, show_default=True,
              help="Most recent records shown.")
@click.option("--json", "as_json", is_flag=True, help="One JSON record per line.")
@click.pass_context
def logs(ctx: click.Context, since: str | None, degraded: bool | None, abstained: bool | None,
         client_request_id: str | None, limit: int, as_json: bool) -> None:
    """List answered requests from the request log (<home>/requests.sqlite), oldest first."""
    if ctx.invoked_subcommand is not None:
        return
    log = open_log()
    if not log.path.is_file():
        click.echo(f"no request log yet at {log.path}: it fills as questions are answered",
                   err=True)
        return
    records = log.records(since=since_option(since), degraded=degraded, abstained=abstained,
                          client_request_id=client_request_id, limit=limit)
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
    """Show one request's record and its full response.

    REQUEST_ID is the server's id; a client's id works too when it names one request."""
    log = open_log()
    record = log.get(request_id) or by_client_id(log, request_id)
    if as_json:
        click.echo(json_line(record.model_dump(mode="json"), indent=2))
        return
    body = record.model_dump(mode="json", exclude={"response"})
    for key, value in body.items():
        shown = json_line(value) if isinstance(value, list | dict) else printable(str(value))
        click.echo(f"{key}: {shown}")
    click.echo("response:")
    click.echo(json_line(record.response, indent=2))


def by_client_id(log: RequestLog, client_request_id: str) -> RequestRecord:
    """The one request a client sent with this id; an error that lists them when the client
    used it for several (a client's id need not be unique: the server's is)."""
    matches = log.records(client_request_id=client_request_id, with_response=True)
    if not matches:
        raise click.ClickException(f"no request {client_request_id!r} in {log.path}")
    if len(matches) > 1:
        for r in matches:
            click.echo(summary_line(r), err=True)
        raise click.ClickException(
            f"{len(matches)} requests were sent with the client request id "
            f"{client_request_id!r} (listed above, oldest first): show one by its server "
            f"request id, the one before the client's in parentheses")
    click.echo(f"request {matches[0].request_id} (sent with the client request id "
               f"{client_request_id!r})", err=True)
    return matches[0]
