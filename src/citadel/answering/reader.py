"""The evidence reader: does this sentence answer the question, and with which words?

A MiniLM-L6 cross-encoder trained in this repository (`scripts/train_reader.py`) and shipped
inside the package as int8 ONNX (`reader_model/`, with its model card and sha256). It reads
a pair — the question (or a claim), then "title | sentence" — and gives

* the probability that the sentence answers the question (or supports the claim), and
* the answer's span inside the sentence: the best start/end token pair of a span head
  trained on SQuAD's answer offsets, mapped back to characters.

Nothing here trains or downloads: the runtime only loads the artifact with onnxruntime, like
the embedder. The reader is English; other languages are judged lexically (`judgement`).
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from citadel.config import ConfigError
from citadel.text.batching import token_batches

MODEL_DIR = "reader_model"
MODEL_FILE = "reader.int8.onnx"
TOKENIZER_FILE = "tokenizer.json"
CARD_FILE = "card.json"
MAX_TOKENS = 160  # question + title + sentence; longer sentences lose their tail
MAX_SPAN_TOKENS = 24  # an answer span longer than this is a sentence, not an answer
TOKEN_BUDGET = 4096  # padded tokens per onnxruntime run: bounds attention's working memory
SEPARATOR = " | "  # between the title and the sentence: the passage the reader was trained on


class ReaderUnavailable(ConfigError):
    """The reader model is missing, corrupted or does not load; the message says what to do."""


@dataclass(frozen=True)
class ReaderScore:
    """The reader's verdict on one (question, sentence) pair."""

    probability: float
    logit: float
    span: tuple[int, int] | None  # character offsets of the answer in the sentence


def passage(title: str, sentence: str) -> str:
    """What the reader reads after the question (training and answering share it)."""
    return f"{title.strip()}{SEPARATOR}{sentence}" if title.strip() else sentence


def sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))


def default_model_dir() -> Path:
    return Path(str(resources.files("citadel.answering").joinpath(MODEL_DIR)))


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class Reader:
    """Loads the model on first use; safe to share between threads (onnxruntime sessions
    are). `model_dir` holds `reader.int8.onnx`, `tokenizer.json` and `card.json`: the
    shipped one by default, or a training run's (a cross-validation fold's)."""

    def __init__(self, model_dir: Path | None = None, threads: int = 0) -> None:
        self.model_dir = Path(model_dir) if model_dir is not None else default_model_dir()
        self.threads = threads
        self._lock = threading.Lock()
        self._loaded: tuple[Any, Any] | None = None
        self._card: dict[str, Any] | None = None

    @property
    def card(self) -> dict[str, Any]:
        """The model card's facts (version, sha256, thresholds, figures)."""
        if self._card is None:
            path = self.model_dir / CARD_FILE
            try:
                self._card = json.loads(path.read_text("utf-8"))
            except OSError as exc:
                raise ReaderUnavailable(
                    f"no reader model card at {path} ({exc.strerror or exc}): reinstall "
                    "citadel, or train one with `make train-reader`") from None
            except ValueError:
                raise ReaderUnavailable(f"the reader model card {path} is not JSON") from None
        return self._card

    @property
    def version(self) -> str:
        return str(self.card.get("version", "unknown"))

    def _load(self) -> tuple[Any, Any]:
        if self._loaded is not None:
            return self._loaded
        with self._lock:
            if self._loaded is None:
                self._loaded = self._open()
            return self._loaded

    def _open(self) -> tuple[Any, Any]:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        model = self.model_dir / MODEL_FILE
        if not model.is_file():
            raise ReaderUnavailable(f"no reader model at {model}: reinstall citadel, or "
                                    "train one with `make train-reader`")
        expected = self.card.get("sha256")
        if expected and file_sha256(model) != expected:
            raise ReaderUnavailable(f"the reader model {model} does not match the sha256 of "
                                    "its model card: the file is corrupted; reinstall citadel")
        tokenizer = Tokenizer.from_file(str(self.model_dir / TOKENIZER_FILE))
        # The longer of question and passage is cut: a question (or claim) that alone fills
        # the window must not fail (only_second would), and an ordinary one keeps its words.
        tokenizer.enable_truncation(MAX_TOKENS, strategy="longest_first")
        tokenizer.no_padding()
        options = ort.SessionOptions()
        options.log_severity_level = 3
        options.intra_op_num_threads = self.threads
        # Idle threads sleep instead of spinning: a server answers several requests at once.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        session = ort.InferenceSession(str(model), options,
                                       providers=["CPUExecutionProvider"])
        return tokenizer, session

    def load(self) -> None:
        """Load the model now (else on first use)."""
        self._load()

    def score(self, question: str, passages: Sequence[tuple[str, str]]) -> list[ReaderScore]:
        """One score per (title, sentence), in order."""
        if not passages:
            return []
        tokenizer, session = self._load()
        texts = [passage(title, sentence) for title, sentence in passages]
        encodings = tokenizer.encode_batch([(question, t) for t in texts])
        out: list[ReaderScore | None] = [None] * len(texts)
        for batch in token_batches([len(e.ids) for e in encodings], TOKEN_BUDGET, len(texts)):
            width = max(len(encodings[i].ids) for i in batch)
            ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros_like(ids)
            types = np.zeros_like(ids)
            for row, i in enumerate(batch):
                e = encodings[i]
                ids[row, :len(e.ids)] = e.ids
                mask[row, :len(e.ids)] = 1
                types[row, :len(e.ids)] = e.type_ids
            logits, starts, ends = session.run(
                None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})
            for row, i in enumerate(batch):
                prefix = len(texts[i]) - len(passages[i][1])
                span = best_span(starts[row], ends[row], encodings[i].sequence_ids,
                                 encodings[i].offsets, prefix, len(passages[i][1]))
                z = float(logits[row])
                out[i] = ReaderScore(probability=sigmoid(z), logit=z, span=span)
        return [s for s in out if s is not None]


def best_span(
    starts: np.ndarray, ends: np.ndarray, sequence_ids: Sequence[int | None],
    offsets: Sequence[tuple[int, int]], prefix: int, length: int,
) -> tuple[int, int] | None:
    """The highest start + end logit pair of tokens inside the sentence (not the question,
    not the title), at most MAX_SPAN_TOKENS apart; character offsets in the sentence."""
    inside = [k for k, (seq, (a, _)) in enumerate(zip(sequence_ids, offsets, strict=True))
              if seq == 1 and a >= prefix]
    if not inside:
        return None
    idx = np.asarray(inside)
    s, e = starts[idx], ends[idx]
    # scores[i, j]: span from the i-th to the j-th sentence token, j >= i, short enough.
    scores = s[:, None] + e[None, :]
    n = len(idx)
    rows, cols = np.indices((n, n))
    scores = np.where((cols >= rows) & (cols - rows < MAX_SPAN_TOKENS), scores, -np.inf)
    i, j = np.unravel_index(int(np.argmax(scores)), scores.shape)
    start = offsets[idx[i]][0] - prefix
    end = offsets[idx[j]][1] - prefix
    if not 0 <= start < end <= length:
        return None
    return start, end
