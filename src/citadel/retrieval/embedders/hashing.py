"""A deterministic bag-of-words hashing embedder: no model, instant, for tests."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from citadel.retrieval.embedders.base import Embedder, l2_normalise
from citadel.text.terms import content_terms


class HashingEmbedder(Embedder):
    provider = "citadel"
    model = "hashing-v1"

    def __init__(self, dimension: int = 256) -> None:
        self.dimension = dimension

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for term in content_terms(text):
                # blake2b, not hash(): Python's str hash is salted per process.
                digest = hashlib.blake2b(term.encode(), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                sign = 1.0 if value & 1 else -1.0
                out[row, (value >> 1) % self.dimension] += sign
        return l2_normalise(out)
