"""Token batches: bounded by tokens, every text in exactly one batch."""

from citadel.text.batching import token_batches


def test_token_batches_stay_within_the_budget_and_cover_every_text():
    lengths = [256] * 40 + [12] * 300 + [90, 700]
    batches = token_batches(lengths, budget=4096, max_batch=128)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for batch in batches:
        longest = max(lengths[i] for i in batch)
        assert len(batch) <= 128
        assert len(batch) * longest <= 4096 or len(batch) == 1  # a long text goes alone
    assert [341] in batches  # 700 tokens: a batch of its own
