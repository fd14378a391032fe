"""Batches of tokenised texts for an ONNX encoder (the embedder and the evidence reader):
similar lengths share a batch, so little of each batch is padding."""

from __future__ import annotations

from collections.abc import Sequence


def token_batches(lengths: Sequence[int], budget: int, max_batch: int) -> list[list[int]]:
    """Indices grouped shortest first so that each batch's size x longest length stays within
    `budget` (a single longer text still gets a batch of its own)."""
    batches: list[list[int]] = []
    current: list[int] = []
    for i in sorted(range(len(lengths)), key=lengths.__getitem__):
        if current and ((len(current) + 1) * lengths[i] > budget or len(current) == max_batch):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches
