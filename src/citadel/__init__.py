"""Citadel: grounded answers whose citations cannot be forged."""

from citadel.config import Settings
from citadel.engine import Engine, InvalidQuestion, NotReady
from citadel.records import Answer, Chunk, Citation, RankedChunk, Trace

__all__ = [
    "Answer", "Chunk", "Citation", "Engine", "InvalidQuestion", "NotReady", "RankedChunk",
    "Settings", "Trace",
]
__version__ = "0.1.0"
