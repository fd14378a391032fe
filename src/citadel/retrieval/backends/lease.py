"""A connection-like resource shared by a backend and the indexes opened from it.

A backend hands its client (Qdrant) or pool (PostgreSQL) to every index it opens. The
resource is created on first use and closed when the backend was closed and no index holds
it any more, so `Engine.open` can close a backend it made while its index keeps serving.
`keep_idle=False` closes it whenever nobody holds it: embedded Qdrant locks its folder to
one client per process, so an idle backend must let go for the next one to open it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

T = TypeVar("T")


class Lease(Generic[T]):
    def __init__(
        self, factory: Callable[[], T], closer: Callable[[T], None], *, keep_idle: bool
    ) -> None:
        self._factory = factory
        self._closer = closer
        self._keep_idle = keep_idle
        self._lock = threading.Lock()
        self._resource: T | None = None
        self._holders = 0
        self._closing = False

    def hold(self) -> T:
        """Take a reference (creating the resource if needed); pair with `release`."""
        with self._lock:
            if self._resource is None:
                self._resource = self._factory()
            self._holders += 1
            return self._resource

    def release(self) -> None:
        with self._lock:
            self._holders = max(0, self._holders - 1)
            if self._holders == 0 and (self._closing or not self._keep_idle):
                self._drop()

    @contextmanager
    def use(self) -> Iterator[T]:
        resource = self.hold()
        try:
            yield resource
        finally:
            self.release()

    def close(self) -> None:
        """Close now if idle, else as soon as the last holder releases."""
        with self._lock:
            self._closing = True
            if self._holders == 0:
                self._drop()

    def _drop(self) -> None:
        resource, self._resource = self._resource, None
        if resource is not None:
            self._closer(resource)
