"""MiniLM batching: the same vectors however the texts are batched."""

import numpy as np
import pytest

from citadel.retrieval.embedders.minilm import MiniLMEmbedder


def test_vectors_do_not_depend_on_the_batch():
    try:
        embedder = MiniLMEmbedder()
    except Exception as exc:  # the model packages are part of the default install
        pytest.fail(f"MiniLM unavailable: {exc}")
    texts = ["Refunds are issued within 5 business days.", "Gift cards are valid for 24 "
             "months from the date of purchase, and can be used online or in stores. " * 6,
             "Lyon"]
    together = embedder.embed(texts)
    alone = np.vstack([embedder.embed([t]) for t in texts])
    assert np.allclose(together, alone, atol=1e-5)
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
