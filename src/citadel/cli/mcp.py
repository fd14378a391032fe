"""`citadel mcp`: the knowledge base as an MCP server over stdio, for a desktop client's
`command` entry (Claude Desktop, Cursor, an agent framework)."""

from __future__ import annotations

import logging

import click


@click.command()
@click.option("--api-key", default=None, envvar="CITADEL_MCP_API_KEY",
              help="A key from the server's [api_keys]: the client sees that key's tenant "
                   "(and public documents). Without one: public documents only.")
def mcp(api_key: str | None) -> None:
    """Serve the active knowledge base over MCP on stdin/stdout: tools `answer`, `search`,
    `verify` and the resources citadel://chunks/{chunk_id}.

    stdout carries the protocol; messages go to stderr. A client configuration:
    {"command": "citadel", "args": ["mcp"], "env": {"CITADEL_HOME": "/path/.citadel"}}"""
    from citadel.config import Settings

    try:
        from citadel.server.auth import ApiKeys, Unauthorized
        from citadel.server.mcp_door import stdio_server
        from citadel.server.operations import Operations
        from citadel.server.provider import EngineProvider
    except ModuleNotFoundError as exc:
        raise click.ClickException(
            f"the MCP server needs the server extra: pip install 'citadel[server]' "
            f"({exc.name} is missing)") from None
    from citadel.engine import NotReady

    settings = Settings.load()
    try:
        scope = ApiKeys.from_settings(settings).scope(api_key)
    except Unauthorized as exc:
        raise click.ClickException(str(exc)) from None
    # stdout is the protocol channel: every message of ours goes to stderr.
    logging.basicConfig(level=logging.WARNING, format="citadel mcp: %(message)s")
    provider = EngineProvider(settings)
    try:
        provider.get().embedder.embed_query("warm up")  # load the model before the first call
    except NotReady as exc:  # still serve: each call says what to do until a KB exists
        click.echo(f"citadel mcp: no knowledge base is ready yet ({exc})", err=True)
    tenant = scope.tenant or "public documents only"
    click.echo(f"citadel mcp: serving {settings.home} over stdio ({tenant})", err=True)
    try:
        stdio_server(Operations(provider), scope).run("stdio")
    finally:
        provider.close()
