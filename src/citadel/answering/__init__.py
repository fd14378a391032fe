"""Answering: from ranked chunks to a gated draft.

`context` (S1..Sn, authority first) and `supersession`; `facts` and `conflicts` (values that
disagree across chunks) with `conflict_answer`; `generators/` (extractive, OpenAI-compatible,
with their chat client, structured output and inline markers) and their versioned `prompts/`;
`draft_review` (refuse a gated draft that does not stand); `streaming` and `sentence_release`
(what a stream may show, sentence by sentence); `fallbacks` (honest abstentions).
"""
