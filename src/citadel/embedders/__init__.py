"""Embedders: one small base class, one module per backend, heavy imports done lazily."""

from __future__ import annotations

from citadel.embedders.base import Embedder, EmbedderUnavailable


def get_embedder(name: str) -> Embedder:
    if name == "minilm":
        from citadel.embedders.minilm import MiniLMEmbedder

        return MiniLMEmbedder()
    if name == "hashing":
        from citadel.embedders.hashing import HashingEmbedder

        return HashingEmbedder()
    raise EmbedderUnavailable(f"unknown embedder {name!r}: choose 'minilm' or 'hashing'")


__all__ = ["Embedder", "EmbedderUnavailable", "get_embedder"]
