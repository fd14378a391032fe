"""Peak memory and rate of the MiniLM embedder as the ingest calls it (256 texts a call).

Embeds 1,024 SciFact passages (each abstract's first and second 800 characters) in this
process and prints peak RSS, RSS after the model loaded, and texts/s. Run it in a fresh
process per measurement; to compare with another version of the embedder, pass its
`minilm.py` (e.g. from `git worktree add /tmp/old <commit>`):

    .venv/bin/python benchmarks/embed_memory.py
    .venv/bin/python benchmarks/embed_memory.py /tmp/old/src/citadel/retrieval/embedders/minilm.py
"""

from __future__ import annotations

import importlib.util
import json
import resource
import sys
import time
from pathlib import Path

from scifact import data_dir

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT / "src" / "citadel" / "retrieval" / "embedders" / "minilm.py"


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    spec = importlib.util.spec_from_file_location("minilm_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    texts: list[str] = []
    with (data_dir() / "corpus.jsonl").open() as fh:
        for line in fh:
            row = json.loads(line)
            text = row["title"] + "\n" + row["text"]
            texts += [text[:800], text[800:1600] or row["title"]]
            if len(texts) >= 1024:
                break
    embedder = module.MiniLMEmbedder()
    embedder.embed(texts[:8])  # load the model
    loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    started = time.perf_counter()
    for i in range(0, len(texts), 256):  # EMBED_BATCH of citadel.ingest.embedding_cache
        embedder.embed(texts[i : i + 256])
    seconds = time.perf_counter() - started
    print(json.dumps({"embedder": str(path), "texts": len(texts),
                      "texts_per_s": round(len(texts) / seconds, 1),
                      "rss_after_load_mb": round(loaded),
                      "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                                           / 1024)}))


if __name__ == "__main__":
    main()
