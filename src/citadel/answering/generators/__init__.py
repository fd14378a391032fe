"""Generators turn (question, context) into a `Draft` of labelled quotes, never citations."""

from __future__ import annotations

from citadel.answering.generators.base import Generator
from citadel.answering.judgement import Judge
from citadel.config import ConfigError, Settings


def get_generator(settings: Settings, judge: Judge | None = None) -> Generator:
    """`judge` (the engine's) judges contexts that reach the generator without a judgement."""
    if settings.generator == "extractive":
        from citadel.answering.generators.extractive import ExtractiveGenerator

        return ExtractiveGenerator(
            support_threshold=settings.support_threshold,
            max_sentences=settings.max_answer_sentences,
            judge=judge,
        )
    if settings.generator == "openai":
        return _openai_generator(settings)
    if settings.generator == "local":
        return _local_generator(settings)
    raise ConfigError(
        f"unknown generator {settings.generator!r}: choose 'extractive', 'openai' or 'local'"
    )


def _local_generator(settings: Settings) -> Generator:
    """The OpenAI generator, talking to a llama.cpp server it starts (and stops on close)."""
    from citadel.answering.generators.llama_server import LlamaServer
    from citadel.answering.generators.model_packages import (
        ModelUnavailable,
        assemble,
        default_models_dir,
        get_model,
    )

    try:
        model = get_model(settings.llm_local_model)
        path = assemble(settings.llm_models_dir or default_models_dir(), model)
        server = LlamaServer(path, alias=model.name, context=settings.llm_context,
                             threads=settings.llm_threads)
    except ModelUnavailable as exc:
        raise ConfigError(f"generator 'local': {exc}") from None
    generator = _openai_generator(settings, base_url=server.base_url, model=model.name,
                                  api_key=server.api_key)
    generator.owned = server
    return generator


def _openai_generator(
    settings: Settings,
    *,
    base_url: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
) -> Generator:
    from citadel.answering.generators.chat_client import ChatClient, ChatConfig
    from citadel.answering.generators.openai import JSON_MODES, OpenAIGenerator
    from citadel.answering.prompts import PromptError, load_prompt

    base_url = base_url or settings.llm_base_url
    model = model or settings.llm_model
    if not model:
        raise ConfigError("generator 'openai' needs a model: set CITADEL_LLM_MODEL "
                          "(or llm_model in the config file)")
    if not base_url.startswith(("http://", "https://")):
        raise ConfigError(f"llm_base_url must start with http:// or https://, not "
                          f"{base_url.split('://')[0]!r}")
    if settings.llm_json_mode not in JSON_MODES:
        raise ConfigError(f"llm_json_mode must be one of {', '.join(JSON_MODES)}")
    try:
        prompt, retry_prompt, stream_prompt = (
            load_prompt(settings.llm_prompt), load_prompt(settings.llm_retry_prompt),
            load_prompt(settings.llm_stream_prompt))
    except PromptError as exc:
        raise ConfigError(str(exc)) from None
    key = api_key or (settings.llm_api_key.get_secret_value() if settings.llm_api_key else None)
    config = ChatConfig(
        base_url=base_url,
        model=model,
        api_key=key or None,
        timeout=settings.llm_timeout,
        max_retries=settings.llm_max_retries,
        backoff=settings.llm_backoff,
        max_wait=settings.llm_max_wait,
        temperature=settings.llm_temperature,
        max_tokens=settings.llm_max_tokens,
    )
    return OpenAIGenerator(ChatClient(config), prompt, retry_prompt,
                           stream_prompt=stream_prompt, json_mode=settings.llm_json_mode,
                           support_threshold=settings.llm_support_threshold)


__all__ = ["Generator", "get_generator"]
