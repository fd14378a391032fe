"""The uvicorn configuration `citadel serve` runs: the guarded protocol of
`citadel.server.limits` (connection caps, timeouts, the header limit), the keep-alive
timeout, and with several workers the supervisor's settings.

With several workers the protocol is named by its import path
(`citadel.server.workers:GuardedH11Protocol`): the configuration is pickled to each spawned
worker, and a class made by `guarded_protocol` cannot be. The path is a string, so this
module does not import the worker module (which imports the limits itself).
"""

from __future__ import annotations

from typing import Any

import uvicorn

from citadel.config import Settings
from citadel.server.limits import ConnectionLimits, guarded_protocol

# uvicorn's supervisor pings each worker and kills one that does not answer within this
# many seconds; a worker answers from its first moments, but spawning and importing on a
# loaded machine can take longer than uvicorn's default of 5 s.
HEALTHCHECK_TIMEOUT = 30
WORKER_PROTOCOL = "citadel.server.workers:GuardedH11Protocol"


def server_config(app: Any, settings: Settings, *, workers: int = 1, **kwargs: Any
                  ) -> uvicorn.Config:
    """The uvicorn configuration `citadel serve` runs `app` with (`workers` processes)."""
    http: Any = (guarded_protocol(ConnectionLimits.from_settings(settings)) if workers == 1
                 else WORKER_PROTOCOL)
    if workers > 1:
        kwargs.setdefault("timeout_worker_healthcheck", HEALTHCHECK_TIMEOUT)
    return uvicorn.Config(
        app,
        http=http,
        workers=workers,
        # uvicorn annotates int but only hands it to loop.call_later: a float works.
        timeout_keep_alive=settings.http_keep_alive_timeout,  # type: ignore[arg-type]
        access_log=False,
        **kwargs,
    )
