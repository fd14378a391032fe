"""MiniLM batching: bounded by tokens, and the same vectors however the texts are batched."""

import numpy as np
import pytest

from citadel.retrieval.embedders.minilm import MiniLMEmbedder, token_batches


def test_token_batches_stay_within_the_budget_and_cover_every_text():
    lengths = [256] * 40 + [12] * 300 + [90, 700]
    batches = token_batches(lengths, budget=4096, max_batch=128)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for batch in batches:
        longest = max(lengths[i] for i in batch)
        assert len(batch) <= 128
        assert len(batch) * longest <= 4096 or len(batch) == 1  # a long text goes alone
    assert [341] in batches  # 700 tokens: a batch of its own


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
