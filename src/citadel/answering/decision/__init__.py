"""The decision: answer, abstain, or say the sources disagree — every stage, in order.

Read `pipeline` top to bottom: `sources`, `conflicts` (`conflicts.DETECTORS`, composed by
`composing`), `relevance`, `attempts` (with `review`), the kept-answer check, `outcome`. A
streamed answer releases through `release`. Every answer carries a `verdict` (`verdict`).
"""

from citadel.answering.decision.pipeline import decide, decide_streaming
from citadel.answering.decision.request import DecisionRequest

__all__ = ["DecisionRequest", "decide", "decide_streaming"]
