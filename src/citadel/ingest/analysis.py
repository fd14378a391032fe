"""The ingest step that stores each chunk's language analysis (`Chunk.analysis`).

One call per build, between embedding and writing: chunks in, the same chunks with their
analysis out (identity and offsets unchanged). Requests then only analyse their question.
Analyses are cached by content like vectors (`EmbeddingCache`), so a re-ingest analyses only
the chunks whose content changed.

The analyses are held compressed until each chunk is written (`AnalysedChunks`): parsed, a
SciFact chunk's takes about 20 KB of Python objects (its JSON 2.8 KB, compressed 0.84 KB), so
a corpus of them held at once would dominate the ingest's memory.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Iterator, Sequence
from contextlib import suppress
from typing import overload

from pydantic import ValidationError
from tqdm import tqdm

from citadel.ingest.embedding_cache import EmbeddingCache, text_key
from citadel.records import Chunk, ChunkAnalysis
from citadel.text.analysis import Analyser

ANALYSE_BATCH = 256


def analyser_key(analyser: Analyser) -> str:
    blob = json.dumps(analyser.identity(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


class AnalysedChunks(Sequence[Chunk]):
    """Chunks with their analyses, each analysis kept as compressed JSON and parsed only when
    its chunk is read; equal contents share one blob."""

    def __init__(self, chunks: Sequence[Chunk], keys: Sequence[str],
                 blobs: dict[str, bytes]) -> None:
        self._chunks = chunks
        self._keys = keys
        self._blobs = blobs

    def __len__(self) -> int:
        return len(self._chunks)

    @overload
    def __getitem__(self, index: int) -> Chunk: ...
    @overload
    def __getitem__(self, index: slice) -> list[Chunk]: ...
    def __getitem__(self, index: int | slice) -> Chunk | list[Chunk]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        analysis = ChunkAnalysis.model_validate_json(
            zlib.decompress(self._blobs[self._keys[index]]))
        return self._chunks[index].model_copy(update={"analysis": analysis})

    def __iter__(self) -> Iterator[Chunk]:
        return (self[i] for i in range(len(self)))


def _cached(cache: EmbeddingCache | None, akey: str, keys: list[str]) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    for key, blob in (cache.get_analyses(akey, sorted(set(keys))) if cache else {}).items():
        with suppress(zlib.error, ValidationError):  # unreadable: a miss, analysed again
            ChunkAnalysis.model_validate_json(zlib.decompress(blob))
            found[key] = blob
    return found


def analyse_chunks(chunks: Sequence[Chunk], analyser: Analyser, progress: bool,
                   cache: EmbeddingCache | None = None) -> tuple[AnalysedChunks, int]:
    """Every chunk with its analysis, and how many contents were actually analysed (cache
    misses), in batches so a progress bar can follow."""
    akey = analyser_key(analyser)
    keys = [text_key(c.content) for c in chunks]
    known = _cached(cache, akey, keys)
    todo: dict[str, str] = {}  # content key -> content, each distinct content once
    for key, c in zip(keys, chunks, strict=True):
        if key not in known:
            todo.setdefault(key, c.content)
    pending = list(todo.items())
    with tqdm(total=len(pending), desc="analysing", unit="chunk", disable=not progress,
              file=None) as bar:
        for i in range(0, len(pending), ANALYSE_BATCH):
            batch = pending[i : i + ANALYSE_BATCH]
            analyses = analyser.analyse_chunks([text for _, text in batch])
            fresh = {k: zlib.compress(a.model_dump_json().encode())
                     for (k, _), a in zip(batch, analyses, strict=True)}
            known.update(fresh)
            if cache is not None:
                cache.put_analyses(akey, fresh.items())
            bar.update(len(batch))
    return AnalysedChunks(chunks, keys, known), len(pending)
