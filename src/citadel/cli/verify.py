"""`citadel verify ANSWER.json`: re-check an answer's citation receipts."""

from __future__ import annotations

import json
import sys

import click

from citadel.config import Settings


@click.command()
@click.argument("answer_file", type=click.File("r", encoding="utf-8"))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable verdicts.")
def verify(answer_file, as_json: bool) -> None:
    """Re-check the citations of ANSWER_FILE (the output of `citadel ask --json`; `-` reads
    stdin) against the knowledge base: one verdict per citation, exit 1 if any fails."""
    from citadel.knowledge.verify import VerifyError, parse_receipts, verify_receipts

    try:
        receipts = parse_receipts(answer_file.read())
    except VerifyError as exc:
        raise click.ClickException(f"{answer_file.name}: {exc}") from None
    verdicts = verify_receipts(Settings.load(), receipts)
    failed = sum(not v.ok for v in verdicts)
    if as_json:
        click.echo(json.dumps({"ok": failed == 0, "citations": len(verdicts), "failed": failed,
                               "verdicts": [v.model_dump(mode="json") for v in verdicts]},
                              indent=2))
    else:
        if not verdicts:
            click.echo("no citations to verify")
        for v in verdicts:
            r = v.receipt
            head = f"{'PASS' if v.ok else 'FAIL'} [{r.label or '-'}] {r.chunk_id} @ {r.snapshot_id}"
            quote = r.quote if len(r.quote) <= 70 else r.quote[:67] + "..."
            click.echo(f'{head}: "{quote}"' if v.ok else f"{head}: {v.reason}")
        if verdicts:
            click.echo(f"{len(verdicts) - failed} of {len(verdicts)} citations verified")
    if failed:
        sys.exit(1)
