"""`citadel verify ANSWER.json`: check a saved answer, part by part: its signature, the answer
against what was signed, each citation against its snapshot, the snapshot's presence."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from citadel.config import Settings


def _keys(key_file: Path | None, server: str | None, settings: Settings):
    """The signer's public keys: a file (`citadel keys export`), a server's /v1/keys, or this
    home's own keys."""
    from pydantic import ValidationError

    from citadel.knowledge.signing import KeyStore, PublicKeys

    if key_file is not None:
        try:
            return PublicKeys.model_validate_json(key_file.read_bytes())
        except (OSError, ValidationError) as exc:
            raise click.ClickException(f"{key_file}: not a key file of `citadel keys export` "
                                       f"({type(exc).__name__})") from None
    if server is not None:
        import httpx

        url = server.rstrip("/") + "/v1/keys"
        try:
            response = httpx.get(url, timeout=10)
            response.raise_for_status()
            return PublicKeys.model_validate_json(response.content)
        except (httpx.HTTPError, ValidationError) as exc:
            raise click.ClickException(f"cannot read the public keys at {url}: {exc}") from None
    return KeyStore(settings.home).public_keys()


def _signature_lines(report) -> list[str]:
    check = report.signature
    if check is None or check.signature == "absent":
        return ["signature: none (an unsigned answer: only its citations can be checked)"]
    if check.signature != "valid":
        return [f"FAIL signature: {check.signature}: {check.detail}"]
    lines = [f"PASS signature: valid, {check.detail}, signed {check.signed_at}"]
    if check.mismatches:
        lines += [f"FAIL answer: {part} differs from the signed receipt"
                  for part in check.mismatches]
    else:
        lines.append("PASS answer: exactly what was signed")
    return lines


@click.command()
@click.argument("answer_file", type=click.File("r", encoding="utf-8"))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable report.")
@click.option("--citations-only", is_flag=True,
              help="Do not compare the answer text with the request log (e.g. logging off); "
                   "markers and citations are still checked.")
@click.option("--key", "key_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="The signer's public keys (`citadel keys export`): verify offline.")
@click.option("--server", help="Read the signer's public keys from this server's /v1/keys.")
def verify(answer_file, as_json: bool, citations_only: bool, key_file: Path | None,
           server: str | None) -> None:
    """Check ANSWER_FILE (the JSON of `citadel ask --json`, `/v1/answer`, or any door's answer;
    `-` reads stdin): the signature of its receipt, the answer against what was signed, each
    citation's quote at its offsets in its snapshot (source unchanged), and whether that
    snapshot is still there. Exit 1 if anything fails; a validly signed answer whose snapshot
    is gone verifies by its signature alone."""
    from citadel.config import Settings
    from citadel.knowledge.verify import VerifyError, parse_answer, verify_answer
    from citadel.observability.request_log import WITHHELD, RequestLog

    if key_file is not None and server is not None:
        raise click.UsageError("give --key or --server, not both")
    try:
        saved = parse_answer(answer_file.read())
    except VerifyError as exc:
        raise click.ClickException(f"{answer_file.name}: {exc}") from None
    settings = Settings.load()
    # The request log is the engine's own account of what it answered.
    records = None if citations_only else RequestLog.from_settings(settings).responses
    report = verify_answer(settings, saved, records=records, withheld=WITHHELD,
                           keys=_keys(key_file, server, settings))
    if as_json:
        click.echo(report.model_dump_json(indent=2))
    else:
        for line in _signature_lines(report):
            click.echo(line)
        for sid, state in report.snapshots.items():
            click.echo(f"{'PASS' if state != 'gone' else 'GONE'} snapshot {sid}: {state}")
        if not report.verdicts:
            click.echo("no citations to verify")
        # A snapshot that is gone fails a citation only when no valid signature vouches for it.
        signed = report.signature is not None and report.signature.ok
        for v in report.verdicts:
            r = v.receipt
            verdict = "PASS" if v.ok else "UNCHECKED" if signed and not v.checked else "FAIL"
            head = f"{verdict} [{r.label or '-'}] {r.chunk_id} @ {r.snapshot_id}"
            quote = r.quote if len(r.quote) <= 70 else r.quote[:67] + "..."
            click.echo(f'{head}: "{quote}"' if v.ok else f"{head}: {v.reason}")
        for problem in report.answer_problems:
            if not problem.startswith("signature ") and not problem.endswith(
                    "differs from the signed receipt"):  # both listed above
                click.echo(f"FAIL answer: {problem}")
        if report.verdicts:
            click.echo(f"{report.citations - report.failed} of {report.citations} citations "
                       "verified against their snapshot")
        click.echo("verified" if report.ok else "NOT verified")
    if not report.ok:
        sys.exit(1)
