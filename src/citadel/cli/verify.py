"""`citadel verify ANSWER.json`: check a saved answer, part by part: its signature, the answer
against what was signed, each citation against its snapshot, the snapshot's presence.

The file is untrusted: every line that shows a value from it is printed through
`printable` (as `citadel logs` prints questions), so a chunk id or label holding a newline or
an escape sequence cannot fake a PASS line or move the cursor; `--json` is ASCII-escaped.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from citadel.cli.terminal import json_line, printable

if TYPE_CHECKING:
    from citadel.config import Settings


def _keys(key_file: Path | None, server: str | None, settings: Settings):
    """The signer's public keys: a file (`citadel keys export`), a server's /v1/keys, or this
    home's own."""
    from pydantic import ValidationError

    from citadel.knowledge.signing import KeyStore, PublicKeys, UnsafeKeyFile, refuse_unsafe

    if key_file is not None:
        try:
            with key_file.open("rb") as fh:
                # Whoever can write the file decides which signatures are trusted.
                refuse_unsafe(key_file, os.fstat(fh.fileno()).st_mode, 0o644,
                              "others can write it, and so make it trust a key of theirs")
                return PublicKeys.model_validate_json(fh.read())
        except UnsafeKeyFile as exc:
            raise click.ClickException(str(exc)) from None
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
    failures = check.problems()
    lines += [f"FAIL answer: {problem}" for problem in failures]
    if not failures:
        lines.append("PASS answer: exactly what was signed")
    lines += [f"NOTE {note}" for note in check.notes]
    return lines


def _report_lines(report) -> list[str]:
    lines = _signature_lines(report)
    for sid, state in report.snapshots.items():
        lines.append(f"{'PASS' if state != 'gone' else 'GONE'} snapshot {sid}: {state}")
    if not report.verdicts:
        lines.append("no citations to verify")
    # A snapshot that is gone fails a citation only when no valid signature vouches for it.
    signed = report.signature is not None and report.signature.ok
    for v in report.verdicts:
        r = v.receipt
        verdict = "PASS" if v.ok else "UNCHECKED" if signed and not v.checked else "FAIL"
        head = f"{verdict} [{r.label or '-'}] {r.chunk_id} @ {r.snapshot_id}"
        quote = r.quote if len(r.quote) <= 70 else r.quote[:67] + "..."
        lines.append(f'{head}: "{quote}"' if v.ok else f"{head}: {v.reason}")
    listed = set(report.signature.problems()) if report.signature is not None else set()
    lines += [f"FAIL answer: {p}" for p in report.answer_problems if p not in listed]
    if report.verdicts:
        lines.append(f"{report.citations - report.failed} of {report.citations} citations "
                     "verified against their snapshot")
    lines.append("verified" if report.ok else "NOT verified")
    return lines


@click.command()
@click.argument("answer_file", type=click.File("r", encoding="utf-8"))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable report.")
@click.option("--citations-only", is_flag=True,
              help="Do not compare the answer text with the request log (e.g. logging off); "
                   "markers and citations are still checked.")
@click.option("--key", "key_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="The signer's public keys (`citadel keys export`): verify offline.")
@click.option("--server", help="Read the signer's public keys from this server's /v1/keys; "
                               "citation links must lead to this server.")
def verify(answer_file, as_json: bool, citations_only: bool, key_file: Path | None,
           server: str | None) -> None:
    """Check ANSWER_FILE (the JSON of `citadel ask --json`, `/v1/answer`, or any door's answer;
    `-` reads stdin): the signature of its receipt over the whole answer, each citation's
    quote at its offsets in its snapshot (source unchanged), its link (http(s), opening its
    quote; on the server given with --server), and whether that snapshot is still there. Exit
    1 if anything fails; a validly signed answer whose snapshot is gone verifies by its
    signature alone."""
    from citadel.config import Settings
    from citadel.knowledge.verify import (
        VerifyError,
        origin_of,
        parse_answer,
        server_origins,
        verify_answer,
    )
    from citadel.observability.request_log import WITHHELD, RequestLog

    if key_file is not None and server is not None:
        raise click.UsageError("give --key or --server, not both")
    if server is not None and origin_of(server) is None:
        raise click.BadParameter(f"{server!r} is not an http(s) address", param_hint="--server")
    try:
        saved = parse_answer(answer_file.read())
    except VerifyError as exc:
        raise click.ClickException(printable(f"{answer_file.name}: {exc}")) from None
    settings = Settings.load()
    # The request log is the engine's own account of what it answered.
    records = None if citations_only else RequestLog.from_settings(settings).responses
    report = verify_answer(settings, saved, records=records, withheld=WITHHELD,
                           keys=_keys(key_file, server, settings),
                           origins=server_origins(server) if server is not None else None)
    if as_json:
        click.echo(json_line(report.model_dump(mode="json"), indent=2))
    else:
        for line in _report_lines(report):
            click.echo(printable(line))
    if not report.ok:
        sys.exit(1)
