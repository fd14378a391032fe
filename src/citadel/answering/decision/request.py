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
    keep: every later verdict reports them. `asked_about` holds what a follow-up fragment
    asks about, in its own words."""

    question: str
    context: Context
    trace: RequestTrace
    generator: Generator
    snapshot_id: str
    settings: Settings
    not_composed: list[Conflict] = field(default_factory=list)
    # A follow-up fragment's own words ("weather" in "What about the weather?"): a source
    # retrieved must mention one (`decision.mentions`).
    asked_about: tuple[str, ...] = ()

    @property
    def authority_gap(self) -> float:
        return self.settings.conflict_authority_gap
