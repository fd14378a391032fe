"""The signing keys' files: created for the owner alone whatever the umask, and refused, with
the chmod that fixes them, when others can change them (anyone who can write `keys/` or
`keys.json` could trust a key of theirs or un-revoke one)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from citadel.knowledge.signing import KeyStore, UnsafeKeyFile


@contextmanager
def umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_key_files_are_the_owners_alone_whatever_the_umask(tmp_path):
    with umask(0):
        store = KeyStore(tmp_path)
        key_id, _ = store.active()
        rotated = store.rotate().key_id
        store.revoke(key_id)
    keys = tmp_path / "keys"
    assert mode(keys) == 0o700
    assert mode(keys / "keys.json") == 0o600
    assert mode(keys / f"{key_id}.pem") == mode(keys / f"{rotated}.pem") == 0o600
    assert mode(keys / ".lock") == 0o600
    assert not list(keys.glob(".keys.json.*.tmp"))


@pytest.mark.parametrize(("part", "unsafe", "chmod"), [
    ("keys", 0o777, "chmod 700"),
    ("keys", 0o770, "chmod 700"),
    ("keys/keys.json", 0o666, "chmod 600"),
    ("keys/keys.json", 0o620, "chmod 600"),
    ("keys/{key_id}.pem", 0o644, "chmod 600"),
])
def test_a_key_store_others_can_change_is_refused_with_the_chmod_to_run(
        tmp_path, part, unsafe, chmod):
    key_id, _ = KeyStore(tmp_path).active()
    path = tmp_path / part.format(key_id=key_id)
    path.chmod(unsafe)
    with pytest.raises(UnsafeKeyFile) as refused:
        KeyStore(tmp_path).active()  # a fresh store: nothing cached
    message = str(refused.value)
    assert f"`{chmod} {path}`" in message and f"mode {unsafe:04o}" in message
    assert isinstance(refused.value, PermissionError)  # the CLI prints it as one line
    if not part.endswith(".pem"):  # the public keys are refused too: they decide trust
        with pytest.raises(UnsafeKeyFile):
            KeyStore(tmp_path).public_keys()
    path.chmod(0o700 if part == "keys" else 0o600)
    assert KeyStore(tmp_path).active()[0] == key_id


def test_a_key_store_made_before_under_a_loose_umask_is_refused_until_fixed(tmp_path):
    # What an older Citadel left under `umask 000`: a 0777 folder and a 0666 keys.json.
    key_id, _ = KeyStore(tmp_path).active()
    (tmp_path / "keys").chmod(0o777)
    (tmp_path / "keys" / "keys.json").chmod(0o666)
    with pytest.raises(UnsafeKeyFile, match="chmod 700"):
        KeyStore(tmp_path).rotate()
    (tmp_path / "keys").chmod(0o700)
    with pytest.raises(UnsafeKeyFile, match="chmod 600"):
        KeyStore(tmp_path).rotate()
    (tmp_path / "keys" / "keys.json").chmod(0o600)
    assert KeyStore(tmp_path).rotate().key_id != key_id
