from __future__ import annotations

import logging
import sys

import click

from citadel.config import Settings


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Interface to listen on (loopback by default).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
@click.option("--log-level", type=click.Choice(["debug", "info", "warning", "error"]),
              default="info", show_default=True)
def serve(host: str, port: int, log_level: str) -> None:
    """Serve the active knowledge base over HTTP: API, /docs and the web page at /."""
    try:
        import uvicorn

        from citadel.server import create_app
        from citadel.server.listen import listening_socket
    except ModuleNotFoundError as exc:
        raise click.ClickException(
            f"the HTTP server needs the server extra: pip install 'citadel[server]' "
            f"({exc.name} is missing)"
        ) from None
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    citadel_log = logging.getLogger("citadel")
    citadel_log.addHandler(handler)
    citadel_log.setLevel(log_level.upper())
    try:
        sock = listening_socket(host, port)
    except OSError as exc:
        raise click.ClickException(f"cannot listen on {host}:{port}: {exc}") from None
    app = create_app(Settings.load())
    bound = sock.getsockname()
    click.echo(f"Citadel on http://{host}:{bound[1]}/  (API docs: /docs)", err=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level=log_level, access_log=False))
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
