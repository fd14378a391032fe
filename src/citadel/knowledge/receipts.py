"""Signed receipts: what an answer said and on what evidence, signed by the server.

The signed fields (`payload_fields`) are everything a reader relies on: the question's hash,
the answer text, each citation (chunk id, document, source, title, section, quote, offsets,
pages, snapshot id, content hash), `abstained`, `grounded`, `degraded`, `missing`, the
conflict with its stated values, the answer span, the sources consulted, the next step, the
generator and its prompt version, the request id, the snapshot, the key id and the time.

The canonical form, so that any language can check a receipt:

* `payload` is `JSON(fields)` with keys sorted at every level, no whitespace (`,` and `:`),
  non-ASCII characters as themselves, UTF-8 encoded; numbers as JSON writes them;
* `signature` is the standard base64 of the 64-byte Ed25519 signature of those bytes;
* the public key of `key_id` is published at `GET /v1/keys` (`citadel keys export`) as the
  base64 of its raw 32 bytes.

A verifier checks the signature over `payload` exactly as given (never re-serialised), then
reads `payload` as JSON and compares it with the answer it came with: a changed answer text,
quote, offset or conflict value is named, field by field.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
from collections.abc import Mapping
from typing import Any, Literal

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from pydantic import BaseModel, Field, ValidationError

from citadel.knowledge.signing import KeyStore, PublicKeys
from citadel.records import Answer, SignedReceipt

FORMAT = "citadel-receipt-1"
# Fields of the answer (as any door shows it) that a receipt vouches for, compared one by one.
ANSWER_FIELDS = ("answer", "abstained", "grounded", "degraded", "missing", "citations", "span",
                 "conflict", "sources_consulted", "next_step", "verdict")
SignatureState = Literal["valid", "invalid", "unknown key", "revoked key", "absent",
                         "malformed"]


def canonical(fields: Mapping[str, Any]) -> str:
    return json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def payload_fields(answer: Answer, key_id: str, signed_at: dt.datetime) -> dict[str, Any]:
    trace = answer.trace
    dumped = answer.model_dump(mode="json", include=set(ANSWER_FIELDS))
    return {**dumped, "format": FORMAT, "key_id": key_id, "signed_at": _time(signed_at),
            "request_id": trace.request_id, "question_sha256": trace.question_sha256,
            "snapshot_id": trace.snapshot_id, "generator": trace.generator,
            "prompt_version": trace.prompt_version}


def sign(answer: Answer, key_id: str, private: Ed25519PrivateKey,
         signed_at: dt.datetime | None = None) -> Answer:
    """The answer with its signed receipt."""
    at = (signed_at or dt.datetime.now(dt.UTC)).replace(microsecond=0)
    payload = canonical(payload_fields(answer, key_id, at))
    signature = base64.b64encode(private.sign(payload.encode())).decode()
    return answer.model_copy(update={"receipt": SignedReceipt(
        key_id=key_id, signed_at=at, payload=payload, signature=signature)})


def _time(at: dt.datetime) -> str:
    return at.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class ReceiptCheck(BaseModel):
    """What a receipt proves about the answer it came with."""

    signature: SignatureState
    detail: str = ""
    key_id: str | None = None
    signed_at: str | None = None
    mismatches: list[str] = Field(default_factory=list, description="Parts of the answer "
                                  "that differ from what the receipt signed.")
    signed: dict[str, Any] | None = Field(default=None, description="The signed fields, "
                                          "when the signature is valid.")

    @property
    def ok(self) -> bool:
        return self.signature == "valid" and not self.mismatches


def check_receipt(answer: Mapping[str, Any], keys: PublicKeys) -> ReceiptCheck:
    """Check the `receipt` of an answer (as JSON, from any door) with the published keys."""
    raw = answer.get("receipt")
    if raw is None:
        return ReceiptCheck(signature="absent", detail="the answer carries no receipt")
    try:
        receipt = SignedReceipt.model_validate(raw)
        signature = base64.b64decode(receipt.signature, validate=True)
    except (ValidationError, ValueError):
        return ReceiptCheck(signature="malformed", detail="the receipt is not a "
                            f"{FORMAT} receipt")
    base = {"key_id": receipt.key_id, "signed_at": _time(receipt.signed_at)}
    key = keys.get(receipt.key_id)
    if key is None:
        return ReceiptCheck(signature="unknown key", detail=f"no published key "
                            f"{receipt.key_id}: get the signer's keys (GET /v1/keys)", **base)
    try:
        key.verifier().verify(signature, receipt.payload.encode())
    except InvalidSignature:
        return ReceiptCheck(signature="invalid", detail="the signature does not match the "
                            "receipt's payload: the receipt was changed, or signed by "
                            "another key", **base)
    if key.status == "revoked":
        return ReceiptCheck(signature="revoked key", detail=f"key {key.key_id} was revoked "
                            f"on {key.revoked_at}: its signatures are no longer trusted", **base)
    signed = json.loads(receipt.payload)
    mismatches = _differences(answer, receipt, signed)
    return ReceiptCheck(signature="valid", detail=f"signed by key {key.key_id} ({key.status})",
                        mismatches=mismatches, signed=signed, **base)


def _differences(answer: Mapping[str, Any], receipt: SignedReceipt,
                 signed: Mapping[str, Any]) -> list[str]:
    """The answer's fields that are not what the receipt signed (only fields the answer
    shows: a bare receipt proves its payload)."""
    found: list[str] = []
    if signed.get("key_id") != receipt.key_id:
        found.append("key_id")
    if signed.get("signed_at") != _time(receipt.signed_at):
        found.append("signed_at")
    trace = answer.get("trace") if isinstance(answer.get("trace"), Mapping) else {}
    for name in ("request_id", "snapshot_id"):
        shown = answer.get(name, trace.get(name))
        if shown is not None and shown != signed.get(name):
            found.append(name)
    for name in ANSWER_FIELDS:
        if name not in answer:
            continue
        if name == "citations":
            found += _citation_differences(answer[name], signed.get(name) or [])
        elif answer[name] != signed.get(name):
            found.append(name)
    return found


def _citation_differences(shown: Any, signed: list[dict[str, Any]]) -> list[str]:
    if not isinstance(shown, list) or len(shown) != len(signed):
        return ["citations (count)"]
    found = []
    for i, (mine, theirs) in enumerate(zip(shown, signed, strict=True)):
        if not isinstance(mine, Mapping):
            found.append(f"citations[{i}]")
            continue
        # A door adds a link (`url`); every signed field must be shown unchanged.
        found += [f"citations[{i}].{k}" for k in sorted(theirs) if mine.get(k) != theirs[k]]
    return found


class Signer:
    """Signs answers with the active key of a home's `KeyStore` (made on first use; a rotation
    takes effect at the next answer, in every process sharing the home)."""

    def __init__(self, store: KeyStore) -> None:
        self.store = store

    def __call__(self, answer: Answer) -> Answer:
        key_id, private = self.store.active()
        return sign(answer, key_id, private)
