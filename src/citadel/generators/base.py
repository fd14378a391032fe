from __future__ import annotations

from abc import ABC, abstractmethod

from citadel.citations import GateResult
from citadel.records import Context, Draft, RetryFeedback


class Generator(ABC):
    name: str
    prompt_version: str
    # More than 1: the engine may call `generate` again, with `feedback` saying what `review`
    # found wrong with the gated draft; if the last attempt is refused too, it abstains.
    max_attempts: int = 1

    @abstractmethod
    def generate(
        self, question: str, context: Context, feedback: RetryFeedback | None = None
    ) -> Draft:
        """Answer from the context only, citing blocks by their labels with exact quotes."""

    def review(self, draft: Draft, result: GateResult) -> RetryFeedback | None:
        """Why this draft, as the gate left it, should not be shown; None if it may be."""
        return None
