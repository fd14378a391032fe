from __future__ import annotations

from abc import ABC, abstractmethod

from citadel.records import Context, Draft


class Generator(ABC):
    name: str
    prompt_version: str

    @abstractmethod
    def generate(self, question: str, context: Context) -> Draft:
        """Answer from the context only, citing blocks by their labels with exact quotes."""
