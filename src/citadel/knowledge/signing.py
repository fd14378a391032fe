"""The server's signing keys (Ed25519), kept in `CITADEL_HOME/keys/`.

    keys/                  mode 0700
    keys/keys.json         every key's public half, id, status and dates (published), 0600
    keys/<key id>.pem      the private half of each key (mode 0600), never published

The first signature creates a key. `rotate` makes a new key the active one; older keys stay
published as `retired`, so receipts they signed still verify. `revoke` marks a key as no
longer trusted: receipts it signed then fail verification, and it never signs again. A key
id is the first 16 hex digits of the SHA-256 of the raw public key, so anyone can recompute
it from the key.

Whoever can write `keys/` or `keys.json` decides which keys are trusted (adds one, un-revokes
one), so they are created 0700 / 0600 whatever the umask, and a key store that others can
write (or a private key others can read) is refused with the `chmod` that fixes it.
"""

from __future__ import annotations

import base64
import datetime as dt
import fcntl
import hashlib
import json
import os
import stat
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from pydantic import BaseModel, ConfigDict, Field

KEYS_DIR = "keys"
KEYS_FILE = "keys.json"
ALGORITHM = "Ed25519"
KeyStatus = Literal["active", "retired", "revoked"]


class SigningKeyError(ValueError):
    """A key operation that cannot be done (the message says why)."""


class UnsafeKeyFile(SigningKeyError, PermissionError):
    """A key file or the keys folder is open to others (the message says the chmod to run).
    A PermissionError too, so the command line prints it as a one-line error."""


# Modes a key file may not have: anyone but the owner writing (all of them), or reading (the
# private keys).
_WRITABLE_BY_OTHERS = stat.S_IWGRP | stat.S_IWOTH
_OPEN_TO_OTHERS = stat.S_IRWXG | stat.S_IRWXO


def refuse_unsafe(path: Path, mode_now: int, wanted: int, why: str, *,
                  secret: bool = False) -> None:
    """Refuse a key file (or folder) that others can write, or, a `secret`, read or write;
    the message says why it matters and the chmod (to `wanted`) that fixes it."""
    if mode_now & (_OPEN_TO_OTHERS if secret else _WRITABLE_BY_OTHERS):
        raise UnsafeKeyFile(
            f"{path} has mode {stat.S_IMODE(mode_now):04o}: {why}. Refusing to use it; run "
            f"`chmod {wanted:o} {path}` (and check that its keys are the ones you made)")


def open_private(path: Path, flags: int, mode: int = 0o600) -> int:
    """A file descriptor for `path` with `mode` (0600: the owner's alone) whatever the umask;
    an existing file gets that mode too."""
    fd = os.open(path, flags | os.O_NOFOLLOW, mode)
    try:
        os.fchmod(fd, mode)
    except OSError:
        os.close(fd)
        raise
    return fd


class PublicKey(BaseModel):
    """One published key."""

    model_config = ConfigDict(frozen=True)

    key_id: str
    algorithm: Literal["Ed25519"] = ALGORITHM
    public_key: str = Field(description="The raw 32-byte Ed25519 public key, base64.")
    status: KeyStatus
    created_at: dt.datetime
    revoked_at: dt.datetime | None = None

    def verifier(self) -> Ed25519PublicKey:
        return Ed25519PublicKey.from_public_bytes(base64.b64decode(self.public_key))


class PublicKeys(BaseModel):
    """What `GET /v1/keys` and `citadel keys export` publish."""

    keys: list[PublicKey] = Field(default_factory=list)

    def get(self, key_id: str) -> PublicKey | None:
        return next((k for k in self.keys if k.key_id == key_id), None)


def key_id_of(public: Ed25519PublicKey) -> str:
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


class KeyStore:
    """The keys of one `CITADEL_HOME`. Safe to share between threads; processes sharing the
    home (workers) see each other's rotations at their next signature."""

    def __init__(self, home: Path) -> None:
        self.dir = Path(home) / KEYS_DIR
        self._lock = threading.Lock()
        self._cache: tuple[int, PublicKeys, Ed25519PrivateKey | None, str | None] | None = None

    @property
    def _file(self) -> Path:
        return self.dir / KEYS_FILE

    def public_keys(self) -> PublicKeys:
        """Every key's public half (none before the first signature)."""
        return self._load()[0]

    def active(self) -> tuple[str, Ed25519PrivateKey]:
        """The key that signs now, created when there is none."""
        _, private, key_id = self._load()
        if private is not None and key_id is not None:
            return key_id, private
        with self._changing():
            keys, private, key_id = self._load()
            if private is None or key_id is None:  # nobody made one meanwhile
                key_id, private = self._create(keys)
            return key_id, private

    def rotate(self) -> PublicKey:
        """A new active key; the previous active one becomes `retired` (still published)."""
        with self._changing():
            key_id, _ = self._create(self._load()[0])
            return self.public_keys().get(key_id)  # type: ignore[return-value]

    def revoke(self, key_id: str) -> PublicKey:
        """Mark a key revoked: receipts it signed fail verification, it never signs again
        (the next signature makes a new key if it was the active one)."""
        with self._changing():
            keys, _, _ = self._load()
            found = keys.get(key_id)
            if found is None:
                known = ", ".join(k.key_id for k in keys.keys) or "none yet"
                raise SigningKeyError(f"no key {key_id!r} in {self._file} (keys: {known})")
            if found.status != "revoked":
                revoked = found.model_copy(update={"status": "revoked", "revoked_at": _now()})
                self._write(PublicKeys(keys=[revoked if k.key_id == key_id else k
                                             for k in keys.keys]))
            return self.public_keys().get(key_id)  # type: ignore[return-value]

    # --- files ---------------------------------------------------------------------------

    @contextmanager
    def _changing(self) -> Iterator[None]:
        """Held while keys change: one thread, and one process (workers share the home), at a
        time, each reading the latest keys.json inside it."""
        # The umask can only take bits away from 0700 (the home above keeps its own mode).
        self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._check_dir()
        with self._lock, os.fdopen(open_private(self.dir / ".lock",
                                                os.O_WRONLY | os.O_CREAT), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            self._cache = None
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _load(self) -> tuple[PublicKeys, Ed25519PrivateKey | None, str | None]:
        """The published keys and the active private key, re-read when keys.json changed."""
        try:
            found = self._file.stat()
        except FileNotFoundError:
            return PublicKeys(), None, None
        self._check_dir()
        refuse_unsafe(self._file, found.st_mode, 0o600,
                      "others can write it, and so trust a key of theirs or un-revoke one")
        stamp = found.st_mtime_ns
        cache = self._cache
        if cache is not None and cache[0] == stamp:
            return cache[1], cache[2], cache[3]
        keys = PublicKeys.model_validate_json(self._file.read_bytes())
        active = next((k for k in keys.keys if k.status == "active"), None)
        private = None
        if active is not None:
            path = self.dir / f"{active.key_id}.pem"
            with open(path, "rb") as fh:
                refuse_unsafe(path, os.fstat(fh.fileno()).st_mode, 0o600,
                              "others can read or change this private key", secret=True)
                pem = fh.read()
            loaded = serialization.load_pem_private_key(pem, password=None)
            if not isinstance(loaded, Ed25519PrivateKey) or key_id_of(
                    loaded.public_key()) != active.key_id:
                raise SigningKeyError(f"{self.dir / (active.key_id + '.pem')} is not the private "
                                f"half of key {active.key_id}")
            private = loaded
        self._cache = (stamp, keys, private, active.key_id if active else None)
        return keys, private, active.key_id if active else None

    def _create(self, keys: PublicKeys) -> tuple[str, Ed25519PrivateKey]:
        private = Ed25519PrivateKey.generate()
        key_id = key_id_of(private.public_key())
        pem = private.private_bytes(serialization.Encoding.PEM,
                                    serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())
        path = self.dir / f"{key_id}.pem"
        # Created 0600 from the start: the private key is never readable by others, not even
        # for a moment.
        with os.fdopen(open_private(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL), "wb") as fh:
            fh.write(pem)
        raw = private.public_key().public_bytes(serialization.Encoding.Raw,
                                                serialization.PublicFormat.Raw)
        new = PublicKey(key_id=key_id, public_key=base64.b64encode(raw).decode(),
                        status="active", created_at=_now())
        self._write(PublicKeys(keys=[
            k.model_copy(update={"status": "retired"}) if k.status == "active" else k
            for k in keys.keys] + [new]))
        return key_id, private

    def _write(self, keys: PublicKeys) -> None:
        """Replace keys.json atomically (a reader sees the old file or the new one)."""
        tmp = self._file.with_name(f".{KEYS_FILE}.{os.getpid()}.tmp")
        with os.fdopen(open_private(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), "w") as fh:
            fh.write(json.dumps(keys.model_dump(mode="json"), indent=2) + "\n")
        os.replace(tmp, self._file)
        self._cache = None

    def _check_dir(self) -> None:
        refuse_unsafe(self.dir, self.dir.stat().st_mode, 0o700,
                      "others can write in it, and so replace keys.json or a private key")
