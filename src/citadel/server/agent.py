"""The support agent behind `/v1/agent`, opened on first use.

The business database is opened (and migrated) once it exists; until then `/v1/agent`
answers 503 saying how to create it, and the rest of the app is unaffected. Each request gets
a `SupportAgent` over the app's current engine, so policy answers come from the snapshot the
other endpoints serve, and start to appear once a knowledge base is ingested.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, cast

from citadel.agent.agent import SupportAgent
from citadel.agent.db import BusinessDB, SqliteBusinessDB
from citadel.agent.decider import Decider
from citadel.agent.factory import business_db, decider_for
from citadel.agent.migrations import migrate
from citadel.config import ConfigError, Settings
from citadel.engine import NotReady
from citadel.server.provider import EngineProvider

if TYPE_CHECKING:
    from citadel.engine import Engine


class AgentProvider:
    def __init__(self, settings: Settings, engines: EngineProvider) -> None:
        self.settings = settings
        self._engines = engines
        self._lock = threading.Lock()
        self._business: tuple[BusinessDB, Decider] | None = None

    def get(self) -> SupportAgent:
        """An agent for one request. Raises NotReady (no business database yet, bad agent
        config) or BusinessUnavailable (the order system is down); both become 503."""
        db, decider = self._open()
        try:
            engine, problem = _Capped(self._engines), None
        except NotReady as exc:  # business facts are still served, the policy part degraded
            engine, problem = None, str(exc)
        return SupportAgent(db, cast("Engine | None", engine), decider, engine_problem=problem,
                            max_question_chars=self.settings.max_question_chars)

    def available(self) -> bool:
        """Whether this server has a business database, found without waiting on one: open
        already, a PostgreSQL DSN (an outage there is the agent's to report when asked), or a
        SQLite file that exists (`citadel demo-data` creates the default one). The page shows
        its Customer support tab only then."""
        with self._lock:
            if self._business is not None:
                return True
        dsn = self.settings.business_dsn
        if dsn and not dsn.startswith("sqlite:///") and ("://" in dsn or "=" in dsn):
            return True  # a server URL or libpq `key=value`: connecting could take seconds
        try:
            db = business_db(self.settings, migrate_schema=False)
        except ConfigError:
            return False
        try:
            return isinstance(db, SqliteBusinessDB) and db.path.exists()
        finally:
            db.close()

    def _open(self) -> tuple[BusinessDB, Decider]:
        with self._lock:
            if self._business is None:
                self._business = self._connect()
            return self._business

    def _connect(self) -> tuple[BusinessDB, Decider]:
        try:
            db = business_db(self.settings, migrate_schema=False)
        except ConfigError as exc:
            raise NotReady(f"business database: {exc}") from None
        try:
            # Creating an empty database here would only turn every key into a 401.
            if isinstance(db, SqliteBusinessDB) and not db.path.exists():
                raise NotReady(f"no business database at {db.path}: run `citadel demo-data` to "
                               "create the demo customers, or set CITADEL_BUSINESS_DSN")
            migrate(db)
            decider = decider_for(self.settings)
        except ConfigError as exc:
            db.close()
            raise NotReady(f"agent: {exc}") from None
        except BaseException:
            db.close()
            raise
        return db, decider

    def close(self) -> None:
        with self._lock:
            if self._business is not None:
                db, decider = self._business
                self._business = None
                db.close()
                close = getattr(decider, "close", None)
                if close is not None:
                    close()


class _Capped:
    """The app's engine as the agent sees it: answers wait for a slot like `/v1/answer`'s
    (`max_concurrent_answers`), and closing is left to the app, which owns the engine."""

    def __init__(self, engines: EngineProvider) -> None:
        self._engine = engines.get()
        self._engines = engines

    def answer(self, *args: Any, **kwargs: Any) -> Any:
        return self._engines.call(self._engine.answer, *args, **kwargs)

    def close(self) -> None:
        pass
