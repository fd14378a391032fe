"""Retrieval: from a question to ranked chunks of one snapshot.

`embedders/` (MiniLM, hashing), `backends/` (local, postgres, qdrant: one `RankedChunk`
schema), `lexical` (tantivy BM25), `sparse` (BM25-style sparse vectors), `fusion`, and the
optional `rerankers/`.
"""
