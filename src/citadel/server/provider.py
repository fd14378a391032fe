"""The app's engine: opened at startup, or on first use once a knowledge base exists.

A server started before anything was ingested still starts: `/readyz` says why it is not
ready and answer endpoints return 503 until an engine can be opened.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from citadel.config import Settings
from citadel.engine import Engine, NotReady

T = TypeVar("T")


class EngineProvider:
    def __init__(
        self,
        settings: Settings,
        engine: Engine | None = None,
        opener: Callable[[Settings], Engine] = Engine.open,
    ) -> None:
        self.settings = engine.settings if engine is not None else settings
        self._engine = engine
        self._owned = engine is None  # close only what we opened
        self._opener = opener
        self._lock = threading.Lock()
        # With the extractive generator engine work is CPU-bound (embedding, scoring): running
        # more of it at once than there are cores only adds contention and a long latency
        # tail, so extra requests wait here (settings.max_concurrent_answers, 0 = per CPU).
        slots = self.settings.max_concurrent_answers or os.cpu_count() or 2
        self._slots = threading.BoundedSemaphore(slots)

    def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run blocking engine work (in a worker thread) once a slot is free."""
        with self._slots:
            return fn(*args, **kwargs)

    def get(self) -> Engine:
        """The engine, opening it if needed. Raises NotReady with the reason."""
        engine = self._engine
        if engine is not None:
            return engine
        with self._lock:
            if self._engine is None:
                try:
                    self._engine = self._opener(self.settings)
                except NotReady:
                    raise
                except Exception as exc:  # bad config, missing model...: not ready, say why
                    raise NotReady(f"{type(exc).__name__}: {exc}") from exc
            return self._engine

    def peek(self) -> Engine | None:
        return self._engine

    def close(self) -> None:
        with self._lock:
            if self._engine is not None and self._owned:
                self._engine.close()
                self._engine = None
