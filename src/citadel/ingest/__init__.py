"""Ingest: files become the chunks of a new snapshot.

`loaders` (Markdown, text, HTML into `Document`s), `chunking` (section-aware, stable ids),
`injection` (planted instructions and hidden text flagged per chunk), `embedding_cache`
(re-ingest re-embeds only what changed) and `pipeline` (`ingest()`: load, chunk, embed, build
and validate the snapshot, switch the alias).
"""
