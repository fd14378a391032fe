"""BM25-style sparse vectors that Citadel computes for engines storing sparse vectors (Qdrant).

A document's weight for term t is BM25's term-frequency part,
    tf · (k1 + 1) / (tf + k1 · (1 − b + b · dl / avgdl)),
with dl the document's term count and avgdl the snapshot's mean. A query weighs each distinct
term 1. The engine multiplies each matching term by its IDF at query time (Qdrant's IDF
modifier keeps document frequencies current), so the dot product is the BM25 score.
Terms are `citadel.text.terms.content_terms` (stopwords dropped, light stemming), hashed to
32-bit ids; a collision merges two terms, which only blurs their weights.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from citadel.text.terms import content_terms

K1 = 1.2
B = 0.75
SEMANTICS = {"engine": "qdrant-sparse", "tokenizer": "citadel-terms-v1",
             "stemmer": "citadel-light-v1", "k1": K1, "b": B, "idf": "engine-modifier",
             "term_id": "blake2b-32", "query": "distinct-terms-v1"}


@dataclass(frozen=True)
class SparseVector:
    indices: list[int]
    values: list[float]


def term_id(term: str) -> int:
    # blake2b, not hash(): Python's str hash is salted per process.
    return int.from_bytes(hashlib.blake2b(term.encode(), digest_size=4).digest(), "little")


def _counts(text: str) -> Counter[int]:
    return Counter(term_id(t) for t in content_terms(text))


def document_vectors(texts: Sequence[str]) -> list[SparseVector]:
    """One vector per text, normalised against the mean length of these texts."""
    counts = [_counts(t) for t in texts]
    lengths = [sum(c.values()) for c in counts]
    avgdl = (sum(lengths) / len(lengths)) if lengths else 1.0
    avgdl = avgdl or 1.0
    out: list[SparseVector] = []
    for c, dl in zip(counts, lengths, strict=True):
        norm = K1 * (1.0 - B + B * dl / avgdl)
        ids = sorted(c)
        out.append(SparseVector(ids, [c[i] * (K1 + 1.0) / (c[i] + norm) for i in ids]))
    return out


def query_vector(text: str) -> SparseVector:
    ids = sorted(_counts(text))
    return SparseVector(ids, [1.0] * len(ids))


def overlap_score(query: SparseVector, document: SparseVector) -> float | None:
    """Sum of the document's term weights over the query's terms (BM25 without IDF);
    None when they share no term."""
    weights = dict(zip(document.indices, document.values, strict=True))
    hits = [weights[i] for i in query.indices if i in weights]
    return sum(hits) if hits else None
