"""Signed receipts: what an answer said and on what evidence, signed by the server.

The signed payload is the answer exactly as it is handed out: every field of it but `trace`
and `receipt` (today the answer text, each citation with its chunk id, document, source,
title, section, quote, offsets, pages, snapshot id and content hash, and a door's link `url`,
`abstained`, `grounded`, `degraded`, `missing`, the conflict with its stated values, the
answer span, the sources consulted, the next step and the verdict; a field added to `Answer`
is signed without an edit here), plus the request it answered (`PROVENANCE`: the request id, the
question's hash, the snapshot, the generator and its prompt version, read from the trace) and
the receipt's own facts (format, key id, time). The engine signs the answer it makes; a door
that adds links to the citations (MCP, the chat endpoint) signs its own copy, links included.

The canonical form, so that any language can check a receipt:

* `payload` is `JSON(fields)` with keys sorted at every level, no whitespace (`,` and `:`),
  non-ASCII characters as themselves, UTF-8 encoded; numbers as JSON writes them;
* `signature` is the standard base64 of the 64-byte Ed25519 signature of those bytes;
* the public key of `key_id` is published at `GET /v1/keys` (`citadel keys export`) as the
  base64 of its raw 32 bytes.

A verifier checks the signature over `payload` exactly as given (never re-serialised), then
reads `payload` as JSON and compares the whole of it with the whole answer it came with: a
changed field is named, a signed field missing from the answer fails, and so does a field
the answer shows that was not signed.

Formats: `citadel-receipt-2` signs a door's links. Under `citadel-receipt-1` a citation's
`url` was added after signing, and a door's record (MCP, chat) did not carry `missing`; such
receipts still verify, with a note saying what the signature does not cover (the link is
then checked for its scheme, its quote and, when the server is known, its origin).
"""

from __future__ import annotations

import base64
import datetime as dt
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from pydantic import BaseModel, Field, ValidationError

from citadel.knowledge.signing import KeyStore, PublicKeys
from citadel.records import Answer, SignedReceipt, Trace

FORMAT = "citadel-receipt-2"
FORMAT_1 = "citadel-receipt-1"
# The receipt's own facts, compared with its envelope.
RECEIPT_FACTS = ("format", "key_id", "signed_at")
# The request the answer was made for, from its trace. An answer shows them in its `trace`
# (`/v1/answer`) or, in part, at its top level (a door's `request_id`, `snapshot_id`): each is
# compared where it is shown; the payload is the account of the rest.
PROVENANCE = ("request_id", "question_sha256", "snapshot_id", "generator", "prompt_version")
# Never signed: the trace (diagnostics, but for its provenance) and the receipt itself.
UNSIGNED = ("trace", "receipt")
# A door's link on a citation (signed since citadel-receipt-2).
LINK = "url"
# What a citadel-receipt-1 door record (it has no `trace`) left out although it was signed.
FORMAT_1_DOOR_OMITS = frozenset({"missing"})
SignatureState = Literal["valid", "invalid", "unknown key", "revoked key", "absent",
                         "malformed"]


def canonical(fields: Mapping[str, Any]) -> str:
    return json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def shown_fields(answer: Answer) -> dict[str, Any]:
    """The answer as JSON without what is never signed."""
    return answer.model_dump(mode="json", exclude=set(UNSIGNED))


def payload_fields(shown: Mapping[str, Any], trace: Trace, key_id: str,
                   signed_at: dt.datetime) -> dict[str, Any]:
    """Everything a receipt signs: the answer as shown (any door's shape, as JSON), the
    request it answered and the receipt's facts."""
    answer = {k: v for k, v in shown.items() if k not in UNSIGNED}
    return {**answer, **{name: getattr(trace, name) for name in PROVENANCE},
            "format": FORMAT, "key_id": key_id, "signed_at": _time(signed_at)}


def sign_fields(shown: Mapping[str, Any], trace: Trace, key_id: str,
                private: Ed25519PrivateKey, signed_at: dt.datetime | None = None
                ) -> SignedReceipt:
    """The receipt of an answer as shown (JSON) and the trace of its request."""
    at = (signed_at or dt.datetime.now(dt.UTC)).replace(microsecond=0)
    payload = canonical(payload_fields(shown, trace, key_id, at))
    signature = base64.b64encode(private.sign(payload.encode())).decode()
    return SignedReceipt(format=FORMAT, key_id=key_id, signed_at=at, payload=payload,
                         signature=signature)


def sign(answer: Answer, key_id: str, private: Ed25519PrivateKey,
         signed_at: dt.datetime | None = None) -> Answer:
    """The answer with its signed receipt."""
    receipt = sign_fields(shown_fields(answer), answer.trace, key_id, private, signed_at)
    return answer.model_copy(update={"receipt": receipt})


def _time(at: dt.datetime) -> str:
    return at.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class ReceiptCheck(BaseModel):
    """What a receipt proves about the answer it came with."""

    signature: SignatureState
    detail: str = ""
    key_id: str | None = None
    signed_at: str | None = None
    format: str | None = Field(default=None, description="The signed payload's format.")
    mismatches: list[str] = Field(default_factory=list, description="Parts of the answer "
                                  "that differ from what the receipt signed.")
    absent: list[str] = Field(default_factory=list, description="Signed parts the answer "
                              "does not show (deleted).")
    unsigned: list[str] = Field(default_factory=list, description="Parts the answer shows "
                                "that the receipt did not sign (added).")
    notes: list[str] = Field(default_factory=list, description="What an older format's "
                             "signature does not cover, and was checked otherwise.")
    signed: dict[str, Any] | None = Field(default=None, description="The signed fields, "
                                          "when the signature is valid.")

    @property
    def ok(self) -> bool:
        return self.signature == "valid" and not (self.mismatches or self.absent
                                                   or self.unsigned)

    def problems(self) -> list[str]:
        """Each failure, as a sentence (none for a valid receipt over exactly this answer,
        or for an answer without a receipt)."""
        found = ([] if self.signature in {"valid", "absent"}
                 else [f"signature {self.signature}: {self.detail}"])
        found += [f"{part} differs from the signed receipt" for part in self.mismatches]
        found += [f"{part} was signed but is missing from the answer" for part in self.absent]
        found += [f"{part} is in the answer but was not signed" for part in self.unsigned]
        return found


def check_receipt(answer: Mapping[str, Any], keys: PublicKeys) -> ReceiptCheck:
    """Check the `receipt` of an answer (as JSON, from any door) with the published keys."""
    raw = answer.get("receipt")
    if raw is None:
        return ReceiptCheck(signature="absent", detail="the answer carries no receipt")
    try:
        receipt = SignedReceipt.model_validate(raw)
        signature = base64.b64decode(receipt.signature, validate=True)
    except (ValidationError, ValueError):
        return ReceiptCheck(signature="malformed", detail=f"the receipt is not a {FORMAT} "
                            f"(or {FORMAT_1}) receipt")
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
    found = _compare(answer, receipt, signed)
    return ReceiptCheck(signature="valid", detail=f"signed by key {key.key_id} ({key.status})",
                        format=signed.get("format"), mismatches=found.mismatches,
                        absent=found.absent, unsigned=found.unsigned, notes=found.notes,
                        signed=signed, **base)


@dataclass
class _Found:
    mismatches: list[str] = field(default_factory=list)
    absent: list[str] = field(default_factory=list)
    unsigned: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _compare(answer: Mapping[str, Any], receipt: SignedReceipt,
             signed: Mapping[str, Any]) -> _Found:
    """The whole signed payload against the whole answer, field by field: whatever fields
    the signer's `Answer` had, with no list of them here."""
    found = _Found()
    old = signed.get("format") == FORMAT_1
    envelope = {"format": receipt.format, "key_id": receipt.key_id,
                "signed_at": _time(receipt.signed_at)}
    found.mismatches += [name for name in RECEIPT_FACTS if signed.get(name) != envelope[name]]
    trace = answer.get("trace") if isinstance(answer.get("trace"), Mapping) else {}
    for name in PROVENANCE:
        if any(name in where and where[name] != signed.get(name) for where in (answer, trace)):
            found.mismatches.append(name)
    for name, value in signed.items():
        if name in RECEIPT_FACTS or name in PROVENANCE:
            continue
        if name not in answer:
            if old and name in FORMAT_1_DOOR_OMITS and "trace" not in answer:
                found.notes.append(f"{FORMAT_1}: a door's answer did not show `{name}`; "
                                   f"its signed value is {json.dumps(value)}")
            else:
                found.absent.append(name)
        elif name == "citations":
            _compare_citations(answer[name], value, old, found)
        elif answer[name] != value:
            found.mismatches.append(name)
    found.unsigned += [name for name in answer
                       if name not in signed and name not in UNSIGNED and name not in PROVENANCE]
    return found


def _compare_citations(shown: Any, signed: Any, old: bool, found: _Found) -> None:
    if not isinstance(shown, list) or not isinstance(signed, list) or len(shown) != len(signed):
        found.mismatches.append("citations (count)")
        return
    unsigned_links = 0
    for i, (mine, theirs) in enumerate(zip(shown, signed, strict=True)):
        if not isinstance(mine, Mapping) or not isinstance(theirs, Mapping):
            found.mismatches.append(f"citations[{i}]")
            continue
        for k in sorted(theirs):
            if k not in mine:
                found.absent.append(f"citations[{i}].{k}")
            elif mine[k] != theirs[k]:
                found.mismatches.append(f"citations[{i}].{k}")
        for k in sorted(set(mine) - set(theirs)):
            if old and k == LINK:
                unsigned_links += 1
            else:
                found.unsigned.append(f"citations[{i}].{k}")
    if unsigned_links:
        found.notes.append(f"{FORMAT_1}: the citations' links were not signed; each was "
                           "checked for an http(s) address that opens its own quote (and "
                           "the server's origin, when the server is known)")


class Signer:
    """Signs answers with the active key of a home's `KeyStore` (made on first use; a rotation
    takes effect at the next answer, in every process sharing the home)."""

    def __init__(self, store: KeyStore) -> None:
        self.store = store

    def __call__(self, answer: Answer) -> Answer:
        key_id, private = self.store.active()
        return sign(answer, key_id, private)

    def receipt(self, shown: Mapping[str, Any], trace: Trace) -> SignedReceipt:
        """The receipt of an answer as a door shows it (its links included)."""
        key_id, private = self.store.active()
        return sign_fields(shown, trace, key_id, private)
