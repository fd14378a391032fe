"""Generators turn (question, context) into a `Draft` of labelled quotes, never citations."""

from __future__ import annotations

from citadel.config import ConfigError, Settings
from citadel.generators.base import Generator


def get_generator(settings: Settings) -> Generator:
    if settings.generator == "extractive":
        from citadel.generators.extractive import ExtractiveGenerator

        return ExtractiveGenerator(
            support_threshold=settings.support_threshold,
            max_sentences=settings.max_answer_sentences,
        )
    raise ConfigError(f"unknown generator {settings.generator!r}: choose 'extractive'")


__all__ = ["Generator", "get_generator"]
