"""Settings: defaults, overridden by a TOML config file, overridden by CITADEL_* variables.

The config file is `$CITADEL_CONFIG` if set, else `<home>/config.toml` if it exists.
Every field `name` can be set as `CITADEL_NAME` in the environment.
"""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError


class ConfigError(ValueError):
    """Raised for a setting that cannot be used; the message says which and why."""


class Settings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    home: Path = Field(default=Path(".citadel"), description="Where snapshots and logs live.")
    backend: str = Field(default="local", description="local | qdrant | postgres")
    # Server backends (see backends/qdrant.py, backends/postgres.py).
    qdrant_url: str | None = Field(default=None, description="Qdrant server: http://host:6333.")
    qdrant_path: str | None = Field(
        default=None, description="Embedded Qdrant folder (default <home>/qdrant), or :memory:.")
    qdrant_alias: str = Field(default="citadel-active", min_length=1)
    postgres_dsn: str | None = Field(default=None, description="postgresql://user@host:port/db")
    backend_timeout: float = Field(default=5.0, gt=0, le=600,
                                   description="Seconds to wait for a server backend.")
    embedder: str = Field(default="minilm", description="minilm | hashing")

    # Chunking (part of the snapshot fingerprint).
    chunk_size: int = Field(default=800, ge=100, le=20_000, description="Max chunk chars.")
    chunk_overlap: int = Field(default=120, ge=0, le=5_000)
    max_file_bytes: int = Field(default=10_000_000, ge=1)
    # Per-document bounds (not in the fingerprint: they refuse a document, never reshape one).
    max_sections_per_document: int = Field(
        default=5_000, ge=1,
        description="A document with more headings-delimited sections is refused (reported "
                    "as skipped).")
    max_chunks_per_document: int = Field(
        default=20_000, ge=1,
        description="A document that would make more chunks is refused (reported as "
                    "skipped); 20,000 chunks hold a 10 MB text at the default chunk size.")
    pdf_passwords: dict[str, SecretStr] = Field(
        default_factory=dict,
        description="Passwords of encrypted PDFs: a [pdf_passwords] table mapping a file's path "
                    "(relative to its ingest root, as the ingest report shows it; or a glob) "
                    "to its password. Never logged or printed.")

    # Retrieval (part of the retrieval config version).
    candidates: int = Field(default=50, ge=1, le=1000, description="Per-retriever pool.")
    top_k: int = Field(default=8, ge=1, le=100, description="Ranked chunks returned.")
    dense_weight: float = Field(default=0.5, ge=0.0, le=1.0)
    max_context: int = Field(default=4, ge=1, le=20)
    authority_weight: float = Field(default=0.3, ge=0.0, le=5.0,
                                    description="Added to relevance x authority in context order.")
    max_per_document: int = Field(default=2, ge=1, le=20)
    freshness_weight: float = Field(
        default=0.1, ge=0.0, le=5.0,
        description="Added x freshness (0 oldest .. 1 newest effective_date among candidates).")
    conflict_authority_gap: float = Field(
        default=0.5, ge=0.0, le=1.0,
        description="A conflicting side this much more authoritative than every other is "
                    "followed (the disagreement is noted); a smaller gap is flagged as a conflict.")

    # Reranking (citadel.retrieval.rerankers); a failed or slow reranker degrades, never
    # fails, a request.
    reranker: str = Field(default="none", description="none | lexical | http")
    reranker_url: str = Field(default="", description="http reranker: the /rerank endpoint.")
    reranker_protocol: str = Field(default="tei", description="http reranker: tei | cohere")
    reranker_model: str = Field(default="", description="http reranker: model name, if needed.")
    rerank_timeout_ms: int = Field(default=2000, ge=1, le=600_000,
                                   description="Time budget of the rerank stage.")
    rerank_depth: int = Field(default=20, ge=1, le=1000,
                              description="Fused candidates handed to the reranker.")

    # Request log (citadel.observability.request_log): one record per answered request.
    log_requests: bool = Field(default=True, description="Write <home>/requests.sqlite.")
    log_questions: bool = Field(default=True, description="Store the question text itself.")
    log_stdout: bool = Field(default=False, description="Also print each record as JSON.")
    log_retention_days: float = Field(default=90.0, ge=0.0,
                                      description="Older records are pruned; 0 keeps all.")
    log_max_rows: int = Field(default=1_000_000, ge=0,
                              description="Oldest records beyond this are pruned; 0: no cap.")

    # Generation.
    generator: str = "extractive"
    # The judgement stage (citadel.answering.judgement): a context sentence answers when its
    # calibrated probability reaches this; below it for every sentence, the answer abstains
    # (without a model call). The default is the threshold chosen on the training data by
    # scripts/train_judgement.py (the shipped weights record it too).
    support_threshold: float = Field(default=0.38, ge=0.0, le=1.0)
    judgement_weights: Path | None = Field(
        default=None, description="Judgement weights file (default: the shipped ones).")
    max_answer_sentences: int = Field(default=2, ge=1, le=10)
    max_question_chars: int = Field(default=2000, ge=1)
    max_concurrent_answers: int = Field(
        default=0, ge=0, le=1024,
        description="Answers the HTTP server computes at once (0: one per CPU); raise it for "
                    "a generator that mostly waits on a remote model.")
    next_step: str = (
        "Contact customer support, or ask an administrator to add a document that covers this."
    )

    # Support agent (citadel.agent): business database and decision step.
    business_dsn: str | None = Field(
        default=None, description="postgresql://... or sqlite:///path; default "
        "<home>/business.sqlite.")
    agent_decider: str = Field(default="auto", description="auto | rules | openai (auto: "
                               "openai when generator = openai, else rules).")

    # Language model over the OpenAI chat-completions protocol (generator = "openai";
    # the agent's openai decider uses the same server settings).
    llm_base_url: str = Field(default="https://api.openai.com/v1",
                              description="Server root; /chat/completions is appended.")
    llm_model: str = ""
    llm_api_key: SecretStr | None = Field(default=None, description="Else $OPENAI_API_KEY.")
    llm_timeout: float = Field(default=60.0, gt=0, le=3600, description="Seconds per request.")
    llm_max_retries: int = Field(default=2, ge=0, le=10,
                                 description="Retries on timeout, connection error, 429, 5xx.")
    llm_backoff: float = Field(default=0.5, ge=0, le=60, description="First retry delay, s.")
    llm_max_wait: float = Field(default=20.0, ge=0, le=600,
                                description="Cap on one wait (backoff or Retry-After), s.")
    llm_json_mode: str = Field(default="auto",
                               description="auto | json_schema | json_object | off")
    llm_temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    llm_max_tokens: int = Field(default=512, ge=16, le=32_000)
    llm_prompt: str = "grounded-v1"
    llm_retry_prompt: str = "grounded-strict-v1"
    llm_stream_prompt: str = "grounded-stream-v1"
    llm_support_threshold: float = Field(
        default=0.5, ge=0.0, le=1.0,
        description="Least share of the model's citations that must pass the gate.")

    def pdf_password_map(self) -> dict[str, str]:
        """The configured PDF passwords in the clear, for the loader only."""
        return {path: pw.get_secret_value() for path, pw in self.pdf_passwords.items()}

    @property
    def retrieval_config_version(self) -> str:
        """A short, stable id of everything that changes which chunks reach the generator."""
        keys = ("backend", "embedder", "candidates", "top_k", "dense_weight", "max_context",
                "authority_weight", "max_per_document", "freshness_weight", "reranker",
                "reranker_protocol", "reranker_model", "rerank_depth")
        blob = json.dumps({k: getattr(self, k) for k in keys}, sort_keys=True, default=str)
        return "rc-" + hashlib.sha256(blob.encode()).hexdigest()[:10]

    @classmethod
    def load(
        cls, env: Mapping[str, str] | None = None, overrides: Mapping[str, Any] | None = None
    ) -> Settings:
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        home = Path(env.get("CITADEL_HOME", str(cls.model_fields["home"].default)))
        config_path = Path(env["CITADEL_CONFIG"]) if env.get("CITADEL_CONFIG") else None
        if config_path is None and (home / "config.toml").is_file():
            config_path = home / "config.toml"
        if config_path is not None:
            values.update(_read_config_file(config_path))
        for name in cls.model_fields:
            key = f"CITADEL_{name.upper()}"
            if key in env:
                values[name] = env[key]
        if values.get("llm_api_key") is None and env.get("OPENAI_API_KEY"):
            values["llm_api_key"] = env["OPENAI_API_KEY"]  # the common convention
        values.update(overrides or {})
        try:
            return cls(**values)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
            )
            raise ConfigError(f"invalid configuration: {problems}") from None


def _read_config_file(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from None
    # Accept both a flat file and a [citadel] table.
    return dict(data.get("citadel", data))
