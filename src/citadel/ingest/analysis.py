"""The ingest step that stores each chunk's language analysis (`Chunk.analysis`).

One call per build, between embedding and writing: chunks in, the same chunks with their
analysis out (identity and offsets unchanged). Requests then only analyse their question.
Analyses are cached by content like vectors (`EmbeddingCache`), so a re-ingest analyses only
the chunks whose content changed.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Sequence
from contextlib import suppress

from pydantic import ValidationError
from tqdm import tqdm

from citadel.ingest.embedding_cache import EmbeddingCache, text_key
from citadel.records import Chunk, ChunkAnalysis
from citadel.text.analysis import Analyser

ANALYSE_BATCH = 256


def analyser_key(analyser: Analyser) -> str:
    blob = json.dumps(analyser.identity(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def _cached(cache: EmbeddingCache | None, akey: str, keys: list[str]) -> dict[str, ChunkAnalysis]:
    found: dict[str, ChunkAnalysis] = {}
    for key, blob in (cache.get_analyses(akey, sorted(set(keys))) if cache else {}).items():
        with suppress(zlib.error, ValidationError):  # unreadable: a miss, analysed again
            found[key] = ChunkAnalysis.model_validate_json(zlib.decompress(blob))
    return found


def analyse_chunks(chunks: Sequence[Chunk], analyser: Analyser, progress: bool,
                   cache: EmbeddingCache | None = None) -> tuple[list[Chunk], int]:
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
            fresh = dict(zip((k for k, _ in batch),
                             analyser.analyse_chunks([text for _, text in batch]), strict=True))
            known.update(fresh)
            if cache is not None:
                cache.put_analyses(akey, ((k, zlib.compress(a.model_dump_json().encode()))
                                          for k, a in fresh.items()))
            bar.update(len(batch))
    return ([c.model_copy(update={"analysis": known[k]}) for k, c in zip(keys, chunks,
                                                                          strict=True)],
            len(pending))
