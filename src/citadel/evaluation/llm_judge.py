"""An LLM judge of claim support (`citadel eval --claim-scorer llm`).

The same protocol as the lexical scorer (`score(claim, evidence) -> 0..1`, `threshold`): the
model gives one verdict per (claim, evidence) pair under the versioned prompt
`claim-judge-v1` (supports / contradicts / not_enough_information, in JSON-schema mode where
the server has it), scored 1 for "supports" and 0 otherwise. Verdicts are cached per pair for
the run, so a citation scored twice costs one call. A reply that is not a verdict scores 0
and is counted (`unreadable`). The model server is any OpenAI-compatible one (the llm_*
settings), or with generator = local a llama.cpp server this scorer starts and stops.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from citadel.answering.generators.chat_client import ChatClient, ChatConfig, FormatRejected
from citadel.answering.prompts import Prompt, load_prompt
from citadel.config import ConfigError, Settings

VERDICTS = ("supports", "contradicts", "not_enough_information")
PROMPT_VERSION = "claim-judge-v1"
_SCHEMA = {
    "type": "object",
    "properties": {"verdict": {"type": "string", "enum": list(VERDICTS)}},
    "required": ["verdict"],
    "additionalProperties": False,
}


class LLMClaimScorer:
    threshold = 0.5

    def __init__(self, client: ChatClient, prompt: Prompt | None = None,
                 owned: Any = None) -> None:
        self.client = client
        self.prompt = prompt or load_prompt(PROMPT_VERSION)
        self.name = f"llm:{client.config.model}/{self.prompt.version}"
        self.verdicts: Counter[str] = Counter()
        self._cache: dict[tuple[str, str], str] = {}
        self._owned = owned  # a model server this scorer started

    def verdict(self, claim: str, evidence: str) -> str:
        key = (claim, evidence)
        if key not in self._cache:
            self._cache[key] = self._ask(claim, evidence)
            self.verdicts[self._cache[key]] += 1
        return self._cache[key]

    def score(self, claim: str, evidence: str) -> float:
        return 1.0 if self.verdict(claim, evidence) == "supports" else 0.0

    def close(self) -> None:
        if self._owned is not None:
            self._owned.close()
            self._owned = None

    def _ask(self, claim: str, evidence: str) -> str:
        messages = self.prompt.render(claim=claim, evidence=evidence)
        fmt = {"type": "json_schema",
               "json_schema": {"name": "claim_verdict", "strict": True, "schema": _SCHEMA}}
        try:
            text = self.client.complete(messages, response_format=fmt)
        except FormatRejected:  # a server without JSON-schema mode: read the text
            text = self.client.complete(messages, response_format=None)
        return read_verdict(text)


def read_verdict(text: str) -> str:
    """The verdict in a reply: the JSON field, else the first verdict word; else unreadable."""
    try:
        value = json.loads(text).get("verdict", "")
    except (ValueError, AttributeError):
        value = text
    found = re.search(r"supports|contradicts|not_enough_information|not enough information",
                      str(value).lower())
    return found.group().replace(" ", "_") if found else "unreadable"


def llm_scorer(settings: Settings) -> LLMClaimScorer:
    """The judge over the configured model server (generator = local: one it starts)."""
    owned = None
    if settings.generator == "local":
        from citadel.answering.generators.llama_server import LlamaServer
        from citadel.answering.generators.model_packages import (
            ModelUnavailable,
            assemble,
            default_models_dir,
            get_model,
        )

        try:
            model = get_model(settings.llm_local_model)
            owned = LlamaServer(assemble(settings.llm_models_dir or default_models_dir(),
                                         model), alias=model.name,
                                context=settings.llm_context, threads=settings.llm_threads)
        except ModelUnavailable as exc:
            raise ConfigError(f"claim scorer llm: {exc}") from None
        base_url, model_name, key = owned.base_url, model.name, owned.api_key
    else:
        if not settings.llm_model:
            raise ConfigError("--claim-scorer llm needs a model server: set CITADEL_LLM_MODEL "
                              "and CITADEL_LLM_BASE_URL, or CITADEL_GENERATOR=local")
        base_url, model_name = settings.llm_base_url, settings.llm_model
        key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
    config = ChatConfig(base_url=base_url, model=model_name, api_key=key,
                        timeout=settings.llm_timeout, max_retries=settings.llm_max_retries,
                        backoff=settings.llm_backoff, max_wait=settings.llm_max_wait,
                        temperature=0.0, max_tokens=32)
    return LLMClaimScorer(ChatClient(config), owned=owned)
