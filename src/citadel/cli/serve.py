from __future__ import annotations

import functools
import signal

import click


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Interface to listen on (loopback by default).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
@click.option("--log-level", type=click.Choice(["debug", "info", "warning", "error"]),
              default="info", show_default=True)
@click.option("--workers", type=click.IntRange(min=1, max=64), default=1, show_default=True,
              help="Worker processes sharing the socket; each opens the engine itself, and "
                   "every per-process limit applies per worker (docs/http.md).")
@click.option("--drain-timeout", type=click.FloatRange(min=0, max=3600), default=30.0,
              show_default=True,
              help="On SIGTERM: seconds requests in flight get to finish (new connections are "
                   "refused at once); an answer stream still open near the end gets a final "
                   "`error` event (shutting_down) instead of a cut connection. Then exit 0.")
def serve(host: str, port: int, log_level: str, workers: int, drain_timeout: float) -> None:
    """Serve the active knowledge base over HTTP: API, /docs and the web page at /.

    Timeouts, connection caps, accepted Host names and the log rate are settings
    (CITADEL_HTTP_*, CITADEL_LOG_LINES_PER_SECOND). SIGTERM drains (`--drain-timeout`),
    in every worker, and exits 0."""
    from citadel.config import Settings

    try:
        import uvicorn

        from citadel.server import create_app
        from citadel.server.listen import listening_socket
        from citadel.server.log_rate import install_server_logging
        from citadel.server.uvicorn_config import server_config
        from citadel.server.workers import DrainingMultiprocess, worker_app
    except ModuleNotFoundError as exc:
        raise click.ClickException(
            f"the HTTP server needs the server extra: pip install 'citadel[server]' "
            f"({exc.name} is missing)"
        ) from None
    # SIGTERM asks for a drain, and a drained server exits 0: uvicorn re-raises the signal once
    # it has shut down, and this handler (the one it restores) makes that a clean exit.
    signal.signal(signal.SIGTERM, _exit_cleanly)
    settings = Settings.load()
    log_handler = install_server_logging(settings, log_level)
    try:
        sock = listening_socket(host, port)
    except OSError as exc:
        raise click.ClickException(f"cannot listen on {host}:{port}: {exc}") from None
    bound = sock.getsockname()
    # log_config=None: uvicorn's records go through the rate-limited handler above.
    if workers == 1:
        app = create_app(settings, bind_host=host)
        app.state.drain.exit_after_drain = True
        config = server_config(app, settings, log_level=log_level, log_config=None,
                               timeout_graceful_shutdown=drain_timeout)
    else:
        # Each worker builds its own app (engine, lease, logging) from the settings.
        config = server_config(functools.partial(worker_app, host, log_level), settings,
                               workers=workers, factory=True, log_level=log_level,
                               log_config=None, timeout_graceful_shutdown=drain_timeout)
    click.echo(f"Citadel on http://{host}:{bound[1]}/  (API docs: /docs"
               + (f"; {workers} worker processes)" if workers > 1 else ")"), err=True)
    try:
        if workers == 1:
            uvicorn.Server(config).run(sockets=[sock])
        else:
            sock.listen(config.backlog)  # the workers accept on it; uvicorn's own bind does too
            DrainingMultiprocess(config, sockets=[sock]).run()
    finally:
        sock.close()
        log_handler.close()  # writes the last "suppressed" summary, if any


def _exit_cleanly(signum: int, frame: object) -> None:
    raise SystemExit(0)
