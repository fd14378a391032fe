"""The server's signing keys (Ed25519), kept in `CITADEL_HOME/keys/`.

    keys/keys.json         every key's public half, id, status and dates (published)
    keys/<key id>.pem      the private half of each key (mode 0600), never published

The first signature creates a key. `rotate` makes a new key the active one; older keys stay
published as `retired`, so receipts they signed still verify. `revoke` marks a key as no
longer trusted: receipts it signed then fail verification, and it never signs again. A key
id is the first 16 hex digits of the SHA-256 of the raw public key, so anyone can recompute
it from the key.
"""

from __future__ import annotations

import base64
import datetime as dt
import fcntl
import hashlib
import json
import os
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
        self.dir.mkdir(parents=True, exist_ok=True)
        with self._lock, (self.dir / ".lock").open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            self._cache = None
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _load(self) -> tuple[PublicKeys, Ed25519PrivateKey | None, str | None]:
        """The published keys and the active private key, re-read when keys.json changed."""
        try:
            stamp = self._file.stat().st_mtime_ns
        except FileNotFoundError:
            return PublicKeys(), None, None
        cache = self._cache
        if cache is not None and cache[0] == stamp:
            return cache[1], cache[2], cache[3]
        keys = PublicKeys.model_validate_json(self._file.read_bytes())
        active = next((k for k in keys.keys if k.status == "active"), None)
        private = None
        if active is not None:
            pem = (self.dir / f"{active.key_id}.pem").read_bytes()
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
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
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
        tmp.write_text(json.dumps(keys.model_dump(mode="json"), indent=2) + "\n")
        os.replace(tmp, self._file)
        self._cache = None
