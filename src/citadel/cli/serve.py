from __future__ import annotations

import click

from citadel.config import Settings


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Interface to listen on (loopback by default).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
@click.option("--log-level", type=click.Choice(["debug", "info", "warning", "error"]),
              default="info", show_default=True)
def serve(host: str, port: int, log_level: str) -> None:
    """Serve the active knowledge base over HTTP: API, /docs and the web page at /.

    Timeouts, connection caps, accepted Host names and the log rate are settings
    (CITADEL_HTTP_*, CITADEL_LOG_LINES_PER_SECOND)."""
    try:
        import uvicorn

        from citadel.server import create_app
        from citadel.server.limits import server_config
        from citadel.server.listen import listening_socket
        from citadel.server.log_rate import install_server_logging
    except ModuleNotFoundError as exc:
        raise click.ClickException(
            f"the HTTP server needs the server extra: pip install 'citadel[server]' "
            f"({exc.name} is missing)"
        ) from None
    settings = Settings.load()
    log_handler = install_server_logging(settings, log_level)
    try:
        sock = listening_socket(host, port)
    except OSError as exc:
        raise click.ClickException(f"cannot listen on {host}:{port}: {exc}") from None
    app = create_app(settings, bind_host=host)
    bound = sock.getsockname()
    click.echo(f"Citadel on http://{host}:{bound[1]}/  (API docs: /docs)", err=True)
    # log_config=None: uvicorn's records go through the rate-limited handler above.
    server = uvicorn.Server(server_config(app, settings, log_level=log_level, log_config=None))
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
        log_handler.close()  # writes the last "suppressed" summary, if any
