"""`citadel keys`: the Ed25519 keys that sign answers (in CITADEL_HOME/keys)."""

from __future__ import annotations

import os
from pathlib import Path

import click


def _store():
    from citadel.config import Settings
    from citadel.knowledge.signing import KeyStore

    return KeyStore(Settings.load().home)


@click.group()
def keys() -> None:
    """The keys that sign answers. Anyone with the public keys (`citadel keys export`, or
    GET /v1/keys) can check a receipt offline, with `citadel verify --key FILE`."""


@keys.command("list")
def list_keys() -> None:
    """Every key: id, status (active, retired, revoked) and dates."""
    published = _store().public_keys().keys
    if not published:
        click.echo("no keys yet: the first answer (or `citadel keys rotate`) makes one")
    for k in published:
        revoked = f", revoked {k.revoked_at:%Y-%m-%d %H:%M}" if k.revoked_at else ""
        click.echo(f"{k.key_id}  {k.status:8}  created {k.created_at:%Y-%m-%d %H:%M}{revoked}")


@keys.command()
def rotate() -> None:
    """Make a new signing key. The old one stays published (retired): what it signed still
    verifies. A running server signs with the new key from its next answer."""
    key = _store().rotate()
    click.echo(f"new signing key {key.key_id}; earlier keys stay published as retired")


@keys.command()
@click.argument("key_id")
def revoke(key_id: str) -> None:
    """Mark KEY_ID revoked: receipts it signed fail verification from now on, and it never
    signs again (a new key is made when it was the active one)."""
    from citadel.knowledge.signing import SigningKeyError

    try:
        key = _store().revoke(key_id)
    except SigningKeyError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"key {key.key_id} revoked at {key.revoked_at:%Y-%m-%d %H:%M:%S} UTC")


@keys.command()
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write to this file instead of stdout.")
def export(out: Path | None) -> None:
    """The public keys as JSON (what GET /v1/keys serves): give it to whoever must check
    receipts without reaching the server."""
    from citadel.knowledge.signing import open_private

    text = _store().public_keys().model_dump_json(indent=2) + "\n"
    if out is None:
        click.echo(text, nl=False)
    else:
        # Readable by all (the keys are public), writable by the owner only whatever the
        # umask: `citadel verify --key` refuses a key file others can change.
        with os.fdopen(open_private(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
                       "w") as fh:
            fh.write(text)
        click.echo(f"wrote {out}", err=True)
