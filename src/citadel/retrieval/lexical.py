"""BM25 lexical index on tantivy: one persistent index directory per snapshot."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import tantivy

TOKENIZER = "en_stem"
# Tantivy's BM25 constants; recorded in the snapshot fingerprint.
SEMANTICS = {"engine": "tantivy", "tokenizer": TOKENIZER, "stemmer": "porter-en", "k1": 1.2,
             "b": 0.75, "query": "or-of-terms-v2-no-stopwords"}
PUBLIC = "_public"
# The tenant term of a chunk no search may return (`Chunk.retrievable`): no filter names it,
# so it is outside every tenant's and the public set (and the unfiltered fast path is off).
NOT_RETRIEVABLE = "_not_retrievable"
# What the tenant filter clause (a constant-score term set) adds to every filtered score.
FILTER_SCORE = np.float32(1.0)
_QUERY_TERM = re.compile(r"[^\W_]+", re.UNICODE)
# Lucene's English stop words. A query leaves them out: each matches most documents, so a
# disjunction holding them scores far more postings for almost no ranking signal
# (benchmarks/search_legs.py: lexical p50 1.33 -> 0.47 ms at 100k chunks, SciFact lexical
# nDCG@10 0.687 -> 0.689; at 1M chunks 25 -> 9 ms, the machine busy).
QUERY_STOPWORDS = frozenset("""
    a an and are as at be but by for if in into is it no not of on or such that the their then
    there these they this to was will with
""".split())  # noqa: SIM905 - a word list reads best as text


def query_terms(text: str) -> list[str]:
    """The words a query searches for: lower case, stop words left out unless nothing else
    is left ("to be or not to be" still finds its documents)."""
    terms = [t.lower() for t in _QUERY_TERM.findall(text)]
    return [t for t in terms if t not in QUERY_STOPWORDS] or terms


def _schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    sb.add_unsigned_field("row", stored=True, indexed=True, fast=True)
    sb.add_text_field("body", stored=False, tokenizer_name=TOKENIZER)
    sb.add_text_field("tenant", stored=False, tokenizer_name="raw")
    sb.add_text_field("category", stored=False, tokenizer_name="raw")
    return sb.build()


def build_index(path: Path, rows: Iterable[tuple[int, str, str | None, str]]) -> int:
    """Index (row, text, tenant, category) tuples; returns the number indexed."""
    path.mkdir(parents=True, exist_ok=True)
    index = tantivy.Index(_schema(), path=str(path))
    writer = index.writer(heap_size=64_000_000, num_threads=1)
    n = 0
    for row, text, tenant, category in rows:
        doc = tantivy.Document()
        doc.add_unsigned("row", row)
        doc.add_text("body", text)
        doc.add_text("tenant", tenant or PUBLIC)
        doc.add_text("category", category)
        writer.add_document(doc)
        n += 1
    writer.commit()
    writer.wait_merging_threads()
    return n


class LexicalIndex:
    def __init__(self, path: Path) -> None:
        self._index = tantivy.Index.open(str(path))
        self._schema = self._index.schema
        searcher = self._index.searcher()
        public = tantivy.Query.term_query(self._schema, "tenant", PUBLIC)
        self._all_public = searcher.search(public, limit=1).count == searcher.num_docs

    def count(self) -> int:
        return self._index.searcher().num_docs

    def parse(self, terms: list[str]) -> tantivy.Query:
        """The disjunction of `terms` over the body. Every term is quoted: tantivy's query
        language must never see user syntax."""
        return self._index.parse_query(" ".join(f'"{t}"' for t in terms), ["body"])

    def top(self, query: tantivy.Query, k: int) -> dict[int, float]:
        """The `k` best rows for `query`, with tantivy's scores."""
        searcher = self._index.searcher()
        return {searcher.doc(addr)["row"][0]: score
                for score, addr in searcher.search(query, limit=k).hits}

    def search(
        self, text: str, k: int, tenant: str | None = None, category: str | None = None
    ) -> dict[int, float]:
        terms = query_terms(text)
        if not terms or k <= 0:
            return {}
        query = self.parse(terms)
        if self._all_public and category is None:
            # Every document passes the tenant filter, so leave it out: a bare disjunction
            # lets tantivy skip blocks that cannot reach the top k (about 2.5x faster at 100k
            # chunks). The filter clause scores a constant 1.0: it is added back in float32,
            # as tantivy adds it, so a score is bit-identical whichever path ran.
            return {row: float(np.float32(score) + FILTER_SCORE)
                    for row, score in self.top(query, k).items()}
        # Always filtered on tenant: no tenant means public documents only.
        tenants = [tenant, PUBLIC] if tenant else [PUBLIC]
        musts = [(tantivy.Occur.Must, query), (tantivy.Occur.Must, tantivy.Query.term_set_query(
            self._schema, "tenant", tenants))]
        if category is not None:
            musts.append((tantivy.Occur.Must, tantivy.Query.term_query(
                self._schema, "category", category)))
        return {row: float(score)
                for row, score in self.top(tantivy.Query.boolean_query(musts), k).items()}
