from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np


class EmbedderUnavailable(RuntimeError):
    """The embedder cannot run here; the message says what to install."""


class Embedder(ABC):
    provider: str
    model: str
    dimension: int

    @abstractmethod
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 array (len(texts), dimension), rows L2-normalised."""

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed([text])[0]

    def fingerprint(self) -> dict[str, object]:
        return {"provider": self.provider, "model": self.model, "dimension": self.dimension}


def l2_normalise(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.maximum(norms, 1e-12)).astype(np.float32)
