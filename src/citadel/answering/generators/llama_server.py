"""A llama.cpp server in this process (PyPI `xllamacpp`: a prebuilt CPU wheel, no compile
step), serving a local GGUF model over the OpenAI chat-completions protocol.

It listens on 127.0.0.1 only, on a free port unless one is given, and requires an API key
(random unless given, so another local user cannot drive the model); `base_url` and
`api_key` are what the OpenAI generator needs. `close()` (or leaving the `with` block) stops it.
"""

from __future__ import annotations

import gc
import os
import secrets
from pathlib import Path
from typing import Any

from citadel.answering.generators.model_packages import ModelUnavailable

INSTALL_HINT = "pip install -e '.[llm]' (or `make llm-setup`)"


def _xllamacpp() -> Any:
    try:
        import xllamacpp
    except ImportError:
        raise ModelUnavailable(
            f"the local model server needs the xllamacpp package: {INSTALL_HINT}"
        ) from None
    return xllamacpp


def default_threads() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
               else os.cpu_count() or 1)


class LlamaServer:
    def __init__(
        self,
        model_path: Path,
        *,
        alias: str,
        port: int = 0,
        context: int = 4096,
        threads: int = 0,
        parallel: int = 1,
        api_key: str | None = None,
        metrics: bool = False,
    ) -> None:
        if not model_path.is_file():
            raise ModelUnavailable(f"no model file at {model_path}")
        xllamacpp = _xllamacpp()
        self.alias = alias
        self.context = context
        self.threads = threads or default_threads()
        self.api_key = api_key or secrets.token_urlsafe(24)
        params = xllamacpp.CommonParams()
        params.model.path = str(model_path)
        params.model_alias = {alias}
        params.hostnames = ["127.0.0.1"]
        params.port = port
        # The context is shared by the parallel slots; each request gets context / parallel.
        params.n_ctx = context * parallel
        params.n_parallel = parallel
        params.cpuparams.n_threads = self.threads
        params.cpuparams_batch.n_threads = self.threads
        params.api_keys = [self.api_key]
        params.endpoint_metrics = metrics  # /metrics: token counts and seconds (benchmarks)
        params.verbosity = -1  # errors only: prompts and replies may hold personal data
        try:
            self._server: Any = xllamacpp.Server(params)
        except Exception as exc:  # the C++ side reports a bad file or too little memory
            raise ModelUnavailable(f"the llama.cpp server did not start: {exc}") from exc
        self.address: str = self._server.listening_address

    @property
    def base_url(self) -> str:
        return f"{self.address}/v1"

    def metrics(self) -> dict[str, float]:
        """The server's counters (`llamacpp:tokens_predicted_total`, ...); needs metrics=True."""
        import httpx

        response = httpx.get(f"{self.address}/metrics", timeout=10,
                             headers={"Authorization": f"Bearer {self.api_key}"})
        response.raise_for_status()
        values = {}
        for line in response.text.splitlines():
            name, _, value = line.partition(" ")
            if name and not name.startswith("#"):
                values[name] = float(value)
        return values

    def close(self) -> None:
        if getattr(self, "_server", None) is not None:
            self._server = None
            gc.collect()  # the server stops when its object is freed

    def __enter__(self) -> LlamaServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"LlamaServer({self.alias!r}, {self.address!r}, threads={self.threads})"
