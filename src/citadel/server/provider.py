"""The app's engine: opened at startup, or on first use once a knowledge base exists.

A server started before anything was ingested still starts: `/readyz` says why it is not
ready and answer endpoints return 503 until an engine can be opened.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from citadel.config import Settings
from citadel.engine import Engine, NotReady


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
