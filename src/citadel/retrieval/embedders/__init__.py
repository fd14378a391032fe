"""Embedders: one small base class, one module per backend, heavy imports done lazily."""

from __future__ import annotations

from citadel.retrieval.embedders.base import Embedder, EmbedderUnavailable


def get_embedder(name: str) -> Embedder:
    if name == "minilm":
        from citadel.retrieval.embedders.minilm import MiniLMEmbedder

        return MiniLMEmbedder()
    if name == "hashing":
        from citadel.retrieval.embedders.hashing import HashingEmbedder

        return HashingEmbedder()
    raise EmbedderUnavailable(f"unknown embedder {name!r}: choose 'minilm' or 'hashing'")


__all__ = ["Embedder", "EmbedderUnavailable", "get_embedder"]
