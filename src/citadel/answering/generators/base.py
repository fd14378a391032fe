from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator

from citadel.gate import GateResult
from citadel.records import Context, Draft, DraftSentence, RetryFeedback


class Generator(ABC):
    name: str
    prompt_version: str
    # More than 1: the engine may call `generate` again, with `feedback` saying what `review`
    # found wrong with the gated draft; if the last attempt is refused too, it abstains.
    max_attempts: int = 1
    # True for a model that decides itself whether the context answers (a language model, a
    # scripted reader): the engine asks it unless the judgement finds the context certainly
    # irrelevant (`Judgement.relevant`), then checks what it kept. False (the extractive
    # generator): the engine abstains before generation unless a sentence answers.
    decides: bool = False

    @abstractmethod
    def generate(
        self, question: str, context: Context, feedback: RetryFeedback | None = None
    ) -> Draft:
        """Answer from the context only, citing blocks by their labels with exact quotes."""

    # True: `stream_draft` yields sentences as the model writes them (Engine.stream gates and
    # releases each one); False: the engine streams the finished, gated answer.
    streams_sentences: bool = False

    def stream_draft(
        self, question: str, context: Context, feedback: RetryFeedback | None = None
    ) -> Iterator[DraftSentence | Draft]:
        """Each sentence as soon as it is complete, then the whole `Draft` as the last item."""
        raise NotImplementedError(f"{type(self).__name__} does not stream sentences")

    def review(self, draft: Draft, result: GateResult) -> RetryFeedback | None:
        """Why this draft, as the gate left it, should not be shown; None if it may be."""
        return None

    def complete(self, messages: list[dict[str, str]]) -> str | None:
        """A language model's reply to chat messages (it may make a follow-up question stand
        alone, `answering.follow_up`); None: this generator has no model to ask."""
        return None

    def close(self) -> None:  # noqa: B027 (most generators own nothing)
        """Release what the generator owns (a model server it started)."""
