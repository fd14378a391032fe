"""`citadel verify ANSWER.json`: re-check an answer's citation receipts."""

from __future__ import annotations

import sys

import click

from citadel.config import Settings


@click.command()
@click.argument("answer_file", type=click.File("r", encoding="utf-8"))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable verdicts.")
@click.option("--citations-only", is_flag=True,
              help="Do not compare the answer text with the request log (e.g. logging off); "
                   "markers and citations are still checked.")
def verify(answer_file, as_json: bool, citations_only: bool) -> None:
    """Re-check the citations of ANSWER_FILE (the output of `citadel ask --json`; `-` reads
    stdin) against the knowledge base: one verdict per citation, one line per problem with
    the answer's text, exit 1 if anything fails."""
    from citadel.knowledge.verify import VerifyError, parse_answer, verify_answer
    from citadel.observability.request_log import WITHHELD, RequestLog

    try:
        saved = parse_answer(answer_file.read())
    except VerifyError as exc:
        raise click.ClickException(f"{answer_file.name}: {exc}") from None
    settings = Settings.load()
    # The request log is the engine's own account of what it answered.
    records = None if citations_only else RequestLog.from_settings(settings).responses
    report = verify_answer(settings, saved, records=records, withheld=WITHHELD)
    verdicts, problems, failed = report.verdicts, report.answer_problems, report.failed
    if as_json:
        click.echo(report.model_dump_json(indent=2))
    else:
        if not verdicts:
            click.echo("no citations to verify")
        for v in verdicts:
            r = v.receipt
            head = f"{'PASS' if v.ok else 'FAIL'} [{r.label or '-'}] {r.chunk_id} @ {r.snapshot_id}"
            quote = r.quote if len(r.quote) <= 70 else r.quote[:67] + "..."
            click.echo(f'{head}: "{quote}"' if v.ok else f"{head}: {v.reason}")
        for problem in problems:
            click.echo(f"FAIL answer: {problem}")
        if verdicts:
            click.echo(f"{len(verdicts) - failed} of {len(verdicts)} citations verified")
    if failed or problems:
        sys.exit(1)
