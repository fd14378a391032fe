"""Reading stored chunk and document payloads back, strictly.

Server engines hold payloads that other tools (or bugs) can change. A payload that is not a
valid `Chunk` (a field missing, a wrong type) is skipped and logged, never patched up: a chunk
with made-up fields could otherwise reach the citation gate looking like evidence.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from pydantic import ValidationError

from citadel.records import Chunk, Document

log = logging.getLogger("citadel.backends")

_CHUNK_FIELDS = frozenset(Chunk.model_fields)


def chunk_payload(chunk: Chunk) -> dict[str, Any]:
    return chunk.model_dump(mode="json")


def read_chunk(payload: Any, where: str) -> Chunk | None:
    """The stored chunk, or None (logged) when the payload is missing or malformed.

    Validation is strict over JSON (no "5" -> 5 coercion), so a wrongly typed field is
    refused rather than converted. Keys that are not Chunk fields are ignored.
    """
    try:
        if isinstance(payload, str | bytes):
            payload = json.loads(payload)
        if not isinstance(payload, dict):
            raise TypeError(f"payload is {type(payload).__name__}, not an object")
        fields = {k: v for k, v in payload.items() if k in _CHUNK_FIELDS}
        return Chunk.model_validate_json(json.dumps(fields), strict=True)
    except (ValidationError, TypeError, ValueError) as exc:
        log.warning("skipping malformed chunk payload at %s: %s", where,
                    str(exc).replace("\n", " ")[:300])
        return None


def read_document(payload: Any, where: str) -> Document | None:
    try:
        if isinstance(payload, str | bytes):
            payload = json.loads(payload)
        if not isinstance(payload, dict):
            raise TypeError(f"payload is {type(payload).__name__}, not an object")
        return Document.model_validate_json(json.dumps(payload), strict=True)
    except (ValidationError, TypeError, ValueError) as exc:
        log.warning("skipping malformed document payload at %s: %s", where,
                    str(exc).replace("\n", " ")[:300])
        return None
