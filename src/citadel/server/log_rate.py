"""A bound on the server's log output: at most N lines a second, the rest summarised.

A flood of clients makes a flood of identical warnings (refused connections, invalid
requests, accept errors): 348k lines in 20 s once, which fills disks and hides everything
else. `RateLimitedHandler` passes at most `per_second` records a second to the real handler
and counts the others by message; the next second starts with one line saying how many were
suppressed and which message was most common (the last summary is written at shutdown).

The one JSON line per request is not limited: it is the access log (benchmarks and operators
read it), it grows only with requests the server actually took, which the connection limits
bound, and `--log-level warning` turns it off.
"""

from __future__ import annotations

import logging
import sys
import time
from collections import Counter
from collections.abc import Callable

from citadel.config import Settings
from citadel.server.request_log import PER_REQUEST


class RateLimitedHandler(logging.Handler):
    def __init__(self, target: logging.Handler, per_second: int,
                 clock: Callable[[], float] = time.monotonic,
                 exempt: Callable[[logging.LogRecord], bool] = lambda record: False) -> None:
        super().__init__()
        self.target = target
        self.per_second = per_second  # 0: no limit
        self.clock = clock
        self.exempt = exempt
        self._window_start = clock()
        self._written = 0
        self._suppressed: Counter[tuple[str, str]] = Counter()

    def emit(self, record: logging.LogRecord) -> None:  # called under self.lock
        if self.exempt(record):
            self.target.handle(record)
            return
        now = self.clock()
        if now - self._window_start >= 1.0:
            self._summarise(now)
            self._window_start, self._written = now, 0
        if self.per_second and self._written >= self.per_second:
            self._suppressed[(record.name, str(record.msg))] += 1
            return
        self._written += 1
        self.target.handle(record)

    def _summarise(self, now: float) -> None:
        total = sum(self._suppressed.values())
        if not total:
            return
        (name, msg), most = self._suppressed.most_common(1)[0]
        self._suppressed.clear()
        summary = logging.LogRecord(
            "citadel.log", logging.WARNING, __file__, 0,
            "suppressed %d log lines in %.1f s (over %d/s); most common, %d times, from %s: %s",
            (total, now - self._window_start, self.per_second, most, name, msg[:200]), None)
        self.target.handle(summary)

    def flush(self) -> None:
        self.target.flush()

    def close(self) -> None:
        with self.lock:
            self._summarise(self.clock())
        self.target.close()
        super().close()


class ServerFormatter(logging.Formatter):
    """Citadel's lines are JSON (or plain sentences) as they are; others get their level."""

    def format(self, record: logging.LogRecord) -> str:
        text = record.getMessage()
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text if record.name.startswith("citadel") else f"{record.levelname}: {text}"


def install_server_logging(settings: Settings, level: str) -> RateLimitedHandler:
    """stderr logging for `citadel serve`: Citadel's, uvicorn's and asyncio's records through
    one handler under one rate limit (`settings.log_lines_per_second`)."""
    stream = logging.StreamHandler(sys.stderr)
    stream.setFormatter(ServerFormatter())
    handler = RateLimitedHandler(stream, settings.log_lines_per_second,
                                 exempt=lambda record: getattr(record, PER_REQUEST, False))
    for name in ("citadel", "uvicorn", "asyncio"):
        logger = logging.getLogger(name)
        logger.addHandler(handler)
        logger.setLevel(level.upper())
        logger.propagate = False  # one line per record, not one per handler up the tree
    return handler
