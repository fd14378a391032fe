"""`citadel mcp`: the knowledge base as an MCP server over stdio, for a desktop client's
`command` entry (Claude Desktop, Cursor, an agent framework)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from citadel.engine import Engine

WARM_UP_QUESTION = "How long does the warm-up take?"


def warm_up(engine: Engine) -> None:
    """Load now what the first answer would otherwise load: the embedder, the question
    analysis (spaCy, and the word-frequency table its rarity reads), the evidence reader and
    the judgement's weights. Nothing is answered, logged or signed."""
    engine.embedder.embed_query(WARM_UP_QUESTION)
    engine.judge.analyse_question(WARM_UP_QUESTION)
    engine.judge.reader.load()
    _ = engine.judge.weights


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
    from citadel.answering.reader import ReaderUnavailable
    from citadel.engine import NotReady
    from citadel.text.analysis import AnalyserUnavailable

    settings = Settings.load()
    try:
        scope = ApiKeys.from_settings(settings).scope(api_key)
    except Unauthorized as exc:
        raise click.ClickException(str(exc)) from None
    # stdout is the protocol channel: every message of ours goes to stderr.
    logging.basicConfig(level=logging.WARNING, format="citadel mcp: %(message)s")
    provider = EngineProvider(settings)
    # Before the first request, so that the first `answer` costs what the others do.
    try:
        warm_up(provider.get())
    except NotReady as exc:  # still serve: each call says what to do until a KB exists
        click.echo(f"citadel mcp: no knowledge base is ready yet ({exc})", err=True)
    except (AnalyserUnavailable, ReaderUnavailable) as exc:  # each answer says so too
        click.echo(f"citadel mcp: {exc}", err=True)
    tenant = scope.tenant or "public documents only"
    click.echo(f"citadel mcp: serving {settings.home} over stdio ({tenant})", err=True)
    try:
        stdio_server(Operations(provider), scope).run("stdio")
    finally:
        provider.close()
