"""Citadel: grounded answers whose citations cannot be forged."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from citadel.config import Settings
    from citadel.engine import Engine, InvalidQuestion, NotReady
    from citadel.records import Answer, Chunk, Citation, RankedChunk, Trace

# The public names, imported on first access (PEP 562): `import citadel.cli` to print
# `--help` must not load the engine and everything behind it.
_LAZY = {
    "Answer": "citadel.records", "Chunk": "citadel.records", "Citation": "citadel.records",
    "RankedChunk": "citadel.records", "Trace": "citadel.records",
    "Engine": "citadel.engine", "InvalidQuestion": "citadel.engine", "NotReady": "citadel.engine",
    "Settings": "citadel.config",
}

__all__ = [
    "Answer", "Chunk", "Citation", "Engine", "InvalidQuestion", "NotReady", "RankedChunk",
    "Settings", "Trace",
]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'citadel' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
