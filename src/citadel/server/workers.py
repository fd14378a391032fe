"""`citadel serve --workers N`: N uvicorn worker processes on one listening socket.

The parent binds the socket (`server.listen`) and runs uvicorn's supervisor, which starts
each worker with multiprocessing's *spawn* (a fresh interpreter, nothing inherited but the
environment and the socket) and restarts one that dies. Everything a worker runs is named
here so it can cross that boundary: `worker_app` (the app factory: it loads the settings,
installs the rate-limited logging and builds the app, so each worker opens, leases and
hot-reloads its own engine) and `GuardedH11Protocol` (the connection limits of
`server.limits`, built from the settings in the worker that imports it). The supervisor's
own settings are in `server.uvicorn_config`.

Each worker is a separate process, so every per-process bound applies per worker; see
docs/http.md, "Several worker processes".

On SIGTERM the supervisor (`DrainingMultiprocess`) closes its copy of the listening socket
and passes the signal to every worker, which drains as a single server does
(`citadel.server.drain`); the socket stops accepting once the workers have closed theirs, and
the supervisor exits 0 when they have all ended.
"""

from __future__ import annotations

from typing import Any

from uvicorn.supervisors import Multiprocess


def worker_app(bind_host: str, log_level: str) -> Any:
    """The app one worker serves (called in the worker, by uvicorn, as `factory=True`)."""
    from citadel.config import Settings
    from citadel.server import create_app
    from citadel.server.log_rate import install_server_logging

    settings = Settings.load()
    install_server_logging(settings, log_level)
    app = create_app(settings, bind_host=bind_host)
    app.state.drain.exit_after_drain = True
    return app


def __getattr__(name: str) -> Any:
    # `GuardedH11Protocol`, made on first import in the worker (uvicorn imports the class by
    # its path there): the connection limits come from that worker's settings.
    if name == "GuardedH11Protocol":
        from citadel.config import Settings
        from citadel.server.limits import ConnectionLimits, guarded_protocol

        protocol = guarded_protocol(ConnectionLimits.from_settings(Settings.load()))
        globals()[name] = protocol
        return protocol
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class DrainingMultiprocess(Multiprocess):
    """uvicorn's supervisor, but a stop also closes the supervisor's copy of the listening
    socket: while any process holds it open the kernel keeps accepting connections into its
    backlog, which nobody would serve once the workers drain."""

    def handle_term(self) -> None:
        self._stop_listening()
        super().handle_term()

    def handle_int(self) -> None:
        self._stop_listening()
        super().handle_int()

    def _stop_listening(self) -> None:
        for sock in self.sockets:
            sock.close()
