"""Evaluation: each layer of a grounded answer scored on its own (see docs/evaluation.md).

metrics      pure metric functions (retrieval, membership, quotes, completeness, key facts)
claims       the pluggable claim-support scorer and its deterministic lexical default
calibration  choosing and measuring a scorer's threshold on labelled pairs
datasets     the versioned eval sets (eval/qa.jsonl, eval/poison_cases.jsonl)
poison       the pass rule of each poison/conflict case
scifact      SciFact as a knowledge base, its test queries and rationale pairs
scoring      one Answer scored on the answer-side layers
suites       demo / poison / scifact runs through the real Engine
support      the decision (answer / abstain / conflict) on customer-support KBs
results      results.json; report: GROUNDED_EVAL.md, rows.jsonl, report.html, --compare
"""
