"""What the decision stages read: one request's question, context, trace and collaborators."""

from __future__ import annotations

from dataclasses import dataclass, field

from citadel.answering.generators import Generator
from citadel.answering.request_trace import RequestTrace
from citadel.config import Settings
from citadel.records import Conflict, Context


@dataclass
class DecisionRequest:
    """One request as the decision sees it, once its context is built and judged.

    `not_composed` collects disagreements a detector found whose answer the gate could not
    keep: every later verdict reports them."""

    question: str
    context: Context
    trace: RequestTrace
    generator: Generator
    snapshot_id: str
    settings: Settings
    not_composed: list[Conflict] = field(default_factory=list)

    @property
    def authority_gap(self) -> float:
        return self.settings.conflict_authority_gap
