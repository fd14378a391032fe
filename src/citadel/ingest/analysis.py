"""The ingest step that stores each chunk's language analysis (`Chunk.analysis`).

One call per build, between embedding and writing: chunks in, the same chunks with their
analysis out (identity and offsets unchanged). Requests then only analyse their question.
"""

from __future__ import annotations

from collections.abc import Sequence

from tqdm import tqdm

from citadel.records import Chunk
from citadel.text.analysis import Analyser

ANALYSE_BATCH = 256


def analyse_chunks(chunks: Sequence[Chunk], analyser: Analyser, progress: bool) -> list[Chunk]:
    """Every chunk with its analysis, in batches (so a progress bar can follow)."""
    out: list[Chunk] = []
    with tqdm(total=len(chunks), desc="analysing", unit="chunk", disable=not progress,
              file=None) as bar:
        for i in range(0, len(chunks), ANALYSE_BATCH):
            batch = chunks[i : i + ANALYSE_BATCH]
            analyses = analyser.analyse_chunks([c.content for c in batch])
            out.extend(c.model_copy(update={"analysis": a})
                       for c, a in zip(batch, analyses, strict=True))
            bar.update(len(batch))
    return out
