"""Settings: defaults, overridden by a TOML config file, overridden by CITADEL_* variables.

The config file is `$CITADEL_CONFIG` if set, else `<home>/config.toml` if it exists.
Every field `name` can be set as `CITADEL_NAME` in the environment; any other CITADEL_*
variable (bar the few in NON_SETTING_VARIABLES / NON_SETTING_PREFIXES) is refused as a typo.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

# CITADEL_* variables that are deliberately not settings (read by the CLI, scripts or tests),
# so `Settings.load` does not mistake them for typos of a setting's name.
NON_SETTING_VARIABLES = frozenset({
    "CITADEL_CONFIG",  # which config file to read (below)
    "CITADEL_DEBUG",  # the CLI shows tracebacks
    "CITADEL_API_KEY",  # `citadel agent --api-key`
    "CITADEL_MCP_API_KEY",  # `citadel mcp --api-key`: whose documents the MCP client sees
    "CITADEL_RERANKER_API_KEY",  # environment only, never stored in settings
    "CITADEL_MONITOR_MAX_CITATION_DROP", "CITADEL_MONITOR_LOW_AUTHORITY",
    "CITADEL_MONITOR_MAX_DOCUMENT_SHARE",  # `citadel monitor` thresholds
    "CITADEL_PY", "CITADEL_LLM_VENV", "CITADEL_LLAMA_SPEC", "CITADEL_SMOLLM_SPEC",
    "CITADEL_LLM_DEMO_PORT",  # scripts/llm-demo.sh
    "CITADEL_SUPPORT_DATASET",  # `citadel eval --suite support`: the dataset folder
})
NON_SETTING_PREFIXES = ("CITADEL_TEST_", "CITADEL_PG_")  # test fixtures, scripts/postgres.sh

# An empty CITADEL_HOME is refused rather than read as the default: it is almost always an
# unset shell variable (CITADEL_HOME=$DATA), and guessing would hide that mistake.
EMPTY_HOME = ("an empty home would be the current directory; set it to a folder, or unset "
              "it for the default .citadel")

# An API key as configured: the key itself (16-128 URL-safe characters, e.g. from
# `citadel.agent.auth.generate_api_key`) or only its SHA-256 as `sha256:<64 hex digits>`.
API_KEY_SHAPE = re.compile(r"^(?:[A-Za-z0-9_-]{16,128}|sha256:[0-9a-f]{64})$")


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

    # Websites as sources (citadel.ingest.web): how a crawl fetches, and its default bounds
    # (a [[websites]] table may set max_pages and max_depth of its own).
    fetch_allow_private: bool = Field(
        default=False,
        description="Fetch from private, loopback and link-local addresses too (an intranet "
                    "help centre). Off: such an address is refused after DNS resolution and "
                    "after every redirect.")
    fetch_delay: float = Field(default=1.0, ge=0.0, le=600.0,
                               description="Seconds between two requests of a crawl (a "
                                           "robots.txt Crawl-delay may lengthen it).")
    fetch_timeout: float = Field(default=20.0, gt=0, le=600,
                                 description="Seconds one request may take, headers and body.")
    fetch_max_page_bytes: int = Field(default=5_000_000, ge=1,
                                      description="A larger page is skipped, with the reason.")
    crawl_max_pages: int = Field(default=500, ge=1, le=1_000_000,
                                 description="URLs a crawl fetches per website at most.")
    crawl_max_depth: int = Field(default=5, ge=0, le=100,
                                 description="Links followed away from a website's start URL.")
    crawl_max_seconds: float = Field(default=1800.0, gt=0, le=86_400,
                                     description="Seconds one website's crawl may take.")

    # Approximate dense search (local backend; citadel.retrieval.ann, needs the `ann` extra).
    ann_min_chunks: int = Field(
        default=50_000, ge=0,
        description="Snapshots of at least this many chunks get a faiss HNSW graph (exact "
                    "search below it); 0: never.")
    ann_m: int = Field(default=32, ge=4, le=128, description="HNSW links per node (fingerprinted).")
    ann_ef_construction: int = Field(default=128, ge=16, le=2000,
                                     description="HNSW build breadth (fingerprinted).")
    ann_ef_search: int | None = Field(
        default=None, ge=8, le=5000,
        description="Candidates the HNSW walk proposes for exact rescoring (at least 4 x "
                    "candidates): recall vs latency. Unset: 400 up to 100k chunks, growing "
                    "with the square root of the size past it (1,265 at 1M), which kept dense "
                    "recall@10 at 0.986 / 0.984 there (benchmarks/ann_scale.py).")

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
    support_threshold: float | None = Field(
        default=None, ge=0.0, le=1.0,
        description="Least probability that a sentence answers (default: the threshold "
                    "fitted with the judgement weights).")
    reader_model: Path | None = Field(
        default=None, description="Folder of an evidence reader model (reader.int8.onnx, "
                                  "tokenizer.json, card.json); default: the shipped one.")
    reader_sentences: int = Field(
        default=8, ge=1, le=64,
        description="Statements the evidence reader reads per request (the best by a "
                    "lexical pre-score): more finds more, each costs a few ms.")
    reader_threads: int = Field(default=0, ge=0, le=64,
                                description="onnxruntime threads of the reader (0: one per core).")
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

    # Tenants on HTTP (citadel.server.auth): the tenant of a request is the one its API key
    # maps to, never a request field; requests without a key see public documents only.
    api_keys: dict[SecretStr, str] = Field(
        default_factory=dict,
        description="An [api_keys] table mapping an API key (or `sha256:<hex>` of it) to the "
                    "tenant whose documents it may see (\"\": public only). Never logged.")
    open_answers: bool = Field(
        default=True,
        description="Answer requests without an API key from public documents; false: 401.")
    # Document management on HTTP (GET/POST /v1/documents, DELETE /v1/documents/{id}): keys
    # of their own, never answering keys, so a key handed to a chat front-end cannot change
    # the knowledge base.
    admin_keys: tuple[SecretStr, ...] = Field(
        default=(),
        description="API keys (or `sha256:<hex>` of them) that may list, add and remove "
                    "documents; they answer no questions. A JSON list or comma-separated in "
                    "the environment. Never logged.")

    # Signed receipts (citadel.knowledge.receipts): keys in CITADEL_HOME/keys.
    sign_answers: bool = Field(
        default=True, description="Sign every answer with the server's Ed25519 key, so that "
                                  "anyone with the public key can check it later, offline.")

    # Links in citations (MCP, the chat-completions door): where people open the page.
    public_url: str | None = Field(
        default=None, pattern=r"^https?://[^\s/?#]+(/[^\s?#]*)?$",
        description="The address the web page is reached at (e.g. https://kb.example.com); "
                    "citation links open the cited source there. Default: the address a "
                    "request came in on, or http://127.0.0.1:8000 for `citadel mcp`.")

    # A running server follows the alias `active` (citadel.server.provider): it checks it at
    # most this often and switches to a new active snapshot once that one is ready; the
    # snapshot it switched away from is closed (and its lease released) after the drain time.
    snapshot_check_seconds: float = Field(
        default=1.0, ge=0.0, le=3600.0,
        description="How often the server checks which snapshot is active (0: every request).")
    snapshot_drain_seconds: float = Field(
        default=30.0, ge=0.0, le=3600.0,
        description="After a switch, requests still running on the old snapshot have this "
                    "long before it is closed and its lease released.")

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
    llm_prompt: str = "grounded-v2"
    llm_retry_prompt: str = "grounded-strict-v2"
    llm_stream_prompt: str = "grounded-stream-v2"
    llm_support_threshold: float = Field(
        default=0.5, ge=0.0, le=1.0,
        description="Least share of the model's citations that must pass the gate.")
    # generator = "local": a llama.cpp server in this process (citadel.answering.generators.
    # llama_server) serving a model assembled from its PyPI part packages; `citadel llm serve`
    # runs the same server on its own for other processes.
    llm_local_model: str = Field(default="qwen2.5-coder-1.5b",
                                 description="qwen2.5-coder-1.5b | qwen2.5-coder-0.5b")
    llm_models_dir: Path | None = Field(
        default=None, description="Where assembled models are kept (default: "
                                  "~/.cache/citadel/models, shared by every home).")
    llm_threads: int = Field(default=0, ge=0, le=256, description="0: one per CPU.")
    llm_context: int = Field(default=4096, ge=512, le=131_072,
                             description="Tokens of context per request (prompt + answer).")

    # HTTP server (`citadel serve`, citadel.server.limits): bounds that keep idle, slow or
    # greedy clients from starving everyone else.
    http_header_timeout: float = Field(
        default=10.0, gt=0, le=3600,
        description="Seconds a connection may take to send a request's headers (from the "
                    "connection or the previous response); then it is closed.")
    http_body_timeout: float = Field(
        default=30.0, gt=0, le=3600,
        description="Seconds a request may take to send its body once its headers arrived.")
    http_keep_alive_timeout: float = Field(
        default=5.0, gt=0, le=3600,
        description="Seconds an idle keep-alive connection stays open between requests.")
    http_max_connections: int = Field(
        default=1000, ge=1, le=1_000_000,
        description="Open connections at once. A full server closes the connection that has "
                    "waited longest without sending a request's headers to admit a new one; "
                    "when every open connection has a request in progress, new ones get 503.")
    http_max_connections_per_client: int = Field(
        default=64, ge=0, le=1_000_000,
        description="Open connections from one client IP; more are refused at once (0: no cap).")
    http_max_streams: int = Field(
        default=256, ge=1, le=1_000_000,
        description="Long-lived responses (answer and chat streams) open at once, and never "
                    "more than half of http_max_connections: the rest stay free for other "
                    "requests. More get 503 too_many_streams.")
    http_max_streams_per_client: int = Field(
        default=16, ge=0, le=1_000_000,
        description="Long-lived responses open at once for one client IP; more get 429 "
                    "too_many_streams (0: no cap).")
    http_max_streams_per_key: int = Field(
        default=64, ge=0, le=1_000_000,
        description="Long-lived responses open at once for one API key; more get 429 "
                    "too_many_streams (0: no cap).")
    http_stream_max_seconds: float = Field(
        default=300.0, gt=0, le=86_400,
        description="Seconds a long-lived response may last; then it ends with a final error "
                    "event (stream_timeout).")
    http_allowed_hosts: tuple[str, ...] = Field(
        default=(),
        description="Host header values accepted besides localhost, 127.0.0.1, [::1] and the "
                    "address served on (any port); `*` accepts all. Comma-separated in the "
                    "environment. Refusing others defeats DNS rebinding.")
    log_lines_per_second: int = Field(
        default=50, ge=0, le=1_000_000,
        description="Server log lines (warnings, errors, server messages) written per second "
                    "at most; the rest are counted and summarised (0: no limit). The one line "
                    "per request is not limited.")

    @field_validator("http_allowed_hosts", mode="before")
    @classmethod
    def _split_hosts(cls, value: Any) -> Any:
        if isinstance(value, str):  # from the environment: "a.example,b.example:8443"
            return tuple(h.strip() for h in value.split(",") if h.strip())
        return value

    @field_validator("home", mode="before")
    @classmethod
    def _home_not_empty(cls, value: Any) -> Any:
        # Path("") is the current directory: snapshots would land wherever the command ran.
        if isinstance(value, str) and not value.strip():
            raise ValueError(EMPTY_HOME)
        return value

    @field_validator("api_keys", mode="before")
    @classmethod
    def _api_keys_json(cls, value: Any) -> Any:
        # CITADEL_API_KEYS arrives as text: a JSON object, like the TOML table.
        if isinstance(value, str):
            try:
                return json.loads(value) if value.strip() else {}
            except json.JSONDecodeError:
                raise ValueError("must be a JSON object of key: tenant") from None
        return value

    @field_validator("admin_keys", mode="before")
    @classmethod
    def _admin_keys_list(cls, value: Any) -> Any:
        # CITADEL_ADMIN_KEYS arrives as text: a JSON list, or keys separated by commas.
        if isinstance(value, str):
            if value.strip().startswith("["):
                try:
                    return json.loads(value)
                except json.JSONDecodeError:
                    raise ValueError("must be a JSON list of keys, or keys separated by "
                                     "commas") from None
            return tuple(k.strip() for k in value.split(",") if k.strip())
        return value

    @field_validator("admin_keys")
    @classmethod
    def _admin_keys_shape(cls, value: tuple[SecretStr, ...]) -> tuple[SecretStr, ...]:
        for n, key in enumerate(value, start=1):
            if not API_KEY_SHAPE.match(key.get_secret_value()):
                raise ValueError(f"key #{n} is neither 16-128 characters of [A-Za-z0-9_-] nor "
                                 "sha256:<64 lowercase hex digits>")
        return value

    @field_validator("api_keys")
    @classmethod
    def _api_keys_shape(cls, value: dict[SecretStr, str]) -> dict[SecretStr, str]:
        for n, (key, tenant) in enumerate(value.items(), start=1):
            # The messages never repeat a key: they name its position only.
            if not API_KEY_SHAPE.match(key.get_secret_value()):
                raise ValueError(f"key #{n} is neither 16-128 characters of [A-Za-z0-9_-] nor "
                                 "sha256:<64 lowercase hex digits>")
            if len(tenant) > 200:
                raise ValueError(f"the tenant of key #{n} is longer than 200 characters")
        return value

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
        _refuse_unknown_variables(env, cls.model_fields)
        values: dict[str, Any] = {}
        raw_home = env.get("CITADEL_HOME", str(cls.model_fields["home"].default))
        if not raw_home.strip():
            raise ConfigError(f"CITADEL_HOME is set but empty: {EMPTY_HOME}")
        home = Path(raw_home)
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


def _refuse_unknown_variables(env: Mapping[str, str], fields: Mapping[str, Any]) -> None:
    """A CITADEL_* variable that names no setting is a typo (CITADEL_TOPK) that would
    otherwise be ignored silently: refuse it, naming the closest known variable."""
    known = {f"CITADEL_{name.upper()}" for name in fields}
    for key in sorted(env):
        if (not key.startswith("CITADEL_") or key in known or key in NON_SETTING_VARIABLES
                or key.startswith(NON_SETTING_PREFIXES)):
            continue
        close = difflib.get_close_matches(key, sorted(known | NON_SETTING_VARIABLES), n=1,
                                          cutoff=0.6)
        hint = f"did you mean {close[0]}?" if close else "no setting has a similar name"
        raise ConfigError(f"unknown environment variable {key} ({hint}); unset it or use a "
                          "setting's name")


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
