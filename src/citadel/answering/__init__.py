"""Answering: from ranked chunks to a decided, gated answer.

`evidence` (retrieve, rerank, context, judgement) reads what one request may see: `context`
(S1..Sn, authority first), `supersession`, `judgement` with its `reader`. `decision/` then
decides, stage by stage (`decision/pipeline.py`): conflicts (`conflicts`, `span_conflicts`,
`reader_conflicts`, composed by `decision/composing`), relevance, attempts with `generators/`
(extractive, OpenAI-compatible, their chat client, structured output, inline markers, and
versioned `prompts/`) and their review (`draft_review`), the outcome with its verdict.
`streaming` says what a stream may show; `fallbacks` writes honest abstentions.
"""
