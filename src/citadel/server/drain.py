"""Graceful drain: what a server's app does when the server is asked to stop (SIGTERM).

uvicorn's graceful shutdown closes the listening socket (a new connection is refused), closes
idle connections, lets every request in flight finish for up to `timeout_graceful_shutdown`
seconds (`citadel serve --drain-timeout`), then cancels what is left. It tells each open
connection by calling its protocol's `shutdown()`; the guarded protocol
(`citadel.server.limits`) passes that on to the app's `Drain`, found in the lifespan state
under `DRAIN_STATE`, which `create_app`'s lifespan puts there.

An answer stream still open when the drain is about to run out is ended by the app itself
with a final `error` event (code `shutting_down`: retry the request) rather than a cut
connection: `stream_end` is a future each stream waits on beside its next step, resolved
`STREAM_MARGIN` seconds before the deadline. Streams that finish earlier end as always.

`citadel serve` also arms a last resort (`exit_after_drain`): engine work that ignores the
deadline (a step blocked in a worker thread) cannot keep the process alive more than
`EXIT_GRACE` seconds past it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time

log = logging.getLogger("citadel.http")

DRAIN_STATE = "citadel.drain"
# Streams get their final event this long before the drain deadline (at most half of it),
# which leaves the process time to close engines and exit before the deadline.
STREAM_MARGIN = 2.0
# After the deadline, this long for the app's shutdown (closing engines) before the process
# is ended anyway.
EXIT_GRACE = 5.0
SHUTTING_DOWN = "shutting_down"
SHUTTING_DOWN_MESSAGE = ("the server is shutting down and ended this stream before its answer "
                         "was complete: retry the request (another instance will answer it)")


class Drain:
    """One app's view of its server's shutdown. `begin` and `stream_end` run on the event
    loop's thread (protocol callbacks, request handlers); `end_streams` on any."""

    def __init__(self) -> None:
        self.exit_after_drain = False  # set by `citadel serve` only: never in tests' processes
        self.began_at: float | None = None
        self._ended = False
        self._waiting: set[asyncio.Future[None]] = set()
        self._watchdog: threading.Timer | None = None

    @property
    def draining(self) -> bool:
        return self.began_at is not None

    def begin(self, timeout: float | None) -> None:
        """The server stopped accepting; what runs has `timeout` seconds (None: no bound).
        Only the first call counts."""
        if self.began_at is not None:
            return
        self.began_at = time.monotonic()
        log.info("draining: requests in flight have %s to finish",
                 "as long as they take" if timeout is None else f"{timeout:g} s")
        if timeout is None:
            return
        margin = min(STREAM_MARGIN, timeout / 2)
        asyncio.get_running_loop().call_later(timeout - margin, self.end_streams)
        self._arm(timeout + EXIT_GRACE)

    def closing(self) -> None:
        """The app shuts down (the server has drained, or had nothing to drain): with
        `exit_after_drain`, the process ends within `EXIT_GRACE` seconds whatever still runs."""
        self._arm(EXIT_GRACE)

    def _arm(self, seconds: float) -> None:
        if self.exit_after_drain and self._watchdog is None:
            self._watchdog = threading.Timer(seconds, _exit_now, (seconds,))
            self._watchdog.daemon = True
            self._watchdog.start()

    def end_streams(self) -> None:
        """Tell every open stream (and any opened later) to end with the final event; from
        any thread."""
        self._ended = True
        for waiter in list(self._waiting):
            waiter.get_loop().call_soon_threadsafe(_resolve, waiter)
        self._waiting.clear()

    def stream_end(self) -> asyncio.Future[None]:
        """A future resolved when this stream must end (at once if that time has come)."""
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self._ended:
            waiter.set_result(None)
        else:
            self._waiting.add(waiter)
        return waiter

    def forget(self, waiter: asyncio.Future[None]) -> None:
        self._waiting.discard(waiter)


def _resolve(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


def _exit_now(seconds: float) -> None:
    log.error("drain: work still running %g s after the server began to stop (past its drain "
              "deadline); exiting anyway", seconds)
    logging.shutdown()
    os._exit(1)
