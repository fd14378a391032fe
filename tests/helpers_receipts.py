"""Receipts for the verification tests: as Citadel signed them before `citadel-receipt-2` (the
engine signed a fixed list of answer fields, and a door, MCP or chat, added its links
afterwards and did not show `missing`; written from the old `receipts.py`), and a door's
answer with a link pointed elsewhere."""

from __future__ import annotations

import base64
import datetime as dt
import json
from typing import Any

from citadel.knowledge.signing import KeyStore
from citadel.records import Answer, SignedReceipt
from citadel.server.cited import CitedAnswer

# The last format-1 signer's list (`verdict` joined it shortly before format 2).
FIELDS = ("answer", "abstained", "grounded", "degraded", "missing", "citations", "span",
          "conflict", "sources_consulted", "next_step", "verdict")


def format_1_receipt(answer: Answer, store: KeyStore) -> SignedReceipt:
    key_id, private = store.active()
    at = dt.datetime.now(dt.UTC).replace(microsecond=0)
    t = answer.trace
    fields = {**answer.model_dump(mode="json", include=set(FIELDS)),
              "format": "citadel-receipt-1", "key_id": key_id,
              "signed_at": at.strftime("%Y-%m-%dT%H:%M:%SZ"), "request_id": t.request_id,
              "question_sha256": t.question_sha256, "snapshot_id": t.snapshot_id,
              "generator": t.generator, "prompt_version": t.prompt_version}
    payload = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return SignedReceipt(format="citadel-receipt-1", key_id=key_id, signed_at=at,
                         payload=payload,
                         signature=base64.b64encode(private.sign(payload.encode())).decode())


# Answer fields that came after citadel-receipt-1: an answer of that time did not have them.
LATER = ("standalone",)


def format_1_answer(answer: Answer, store: KeyStore) -> dict[str, Any]:
    """`/v1/answer`'s JSON with a citadel-receipt-1 receipt."""
    signed = answer.model_copy(update={"receipt": format_1_receipt(answer, store)})
    return _without_later(json.loads(signed.model_dump_json()))


def format_1_door_answer(answer: Answer, store: KeyStore, page_url: str) -> dict[str, Any]:
    """A door's record (MCP's `answer`, chat's `citadel`) with a citadel-receipt-1 receipt:
    the links were added after signing."""
    cited = CitedAnswer.of(answer, page_url, None).model_dump(mode="json")
    return _without_later({**cited, "receipt": format_1_receipt(answer, store).model_dump(
        mode="json")})


def _without_later(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in LATER}


def with_link(record: dict[str, Any], base: str) -> dict[str, Any]:
    """A door's answer whose first citation's link has another base (same fragment)."""
    first = record["citations"][0]
    url = base + "#" + first["url"].split("#", 1)[1]
    return {**record, "citations": [{**first, "url": url}, *record["citations"][1:]]}
