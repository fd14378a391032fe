"""The `citadel` command line. One module per command group; errors become messages."""

from __future__ import annotations

import os
import sys

import click

from citadel.cli.agent import agent, demo_data
from citadel.cli.ask import ask
from citadel.cli.eval import eval_command
from citadel.cli.ingest import ingest
from citadel.cli.kb import kb
from citadel.cli.keys import keys
from citadel.cli.llm import llm
from citadel.cli.logs import logs
from citadel.cli.mcp import mcp
from citadel.cli.monitor import monitor
from citadel.cli.serve import serve
from citadel.cli.verify import verify
from citadel.config import ConfigError
from citadel.engine import InvalidQuestion, NotReady
from citadel.ingest.pipeline import IngestError
from citadel.knowledge.snapshots import SnapshotError
from citadel.retrieval.backends import RetrievalError
from citadel.retrieval.embedders import EmbedderUnavailable
from citadel.retrieval.rerankers import RerankerUnavailable

EXPECTED_ERRORS = (
    ConfigError, NotReady, InvalidQuestion, IngestError, SnapshotError, EmbedderUnavailable,
    RetrievalError, FileNotFoundError, PermissionError, RerankerUnavailable,
)


class CitadelGroup(click.Group):
    """Turns expected failures into one line on stderr and exit code 1, never a traceback."""

    def invoke(self, ctx: click.Context):  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except EXPECTED_ERRORS as exc:
            click.echo(f"Error: {exc}", err=True)
            sys.exit(1)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise
        except Exception as exc:
            if os.environ.get("CITADEL_DEBUG"):
                raise
            click.echo(
                f"Error: unexpected {type(exc).__name__}: {exc} "
                "(set CITADEL_DEBUG=1 for a traceback)",
                err=True,
            )
            sys.exit(1)


@click.group(cls=CitadelGroup)
@click.version_option(package_name="citadel")
def main() -> None:
    """Citadel: grounded answers whose citations cannot be forged.

    Settings come from CITADEL_* environment variables and an optional
    config.toml in CITADEL_HOME (default ./.citadel).
    """


main.add_command(ingest)
main.add_command(ask)
main.add_command(agent)
main.add_command(demo_data)
main.add_command(eval_command)
main.add_command(logs)
main.add_command(monitor)
main.add_command(serve)
main.add_command(kb)
main.add_command(llm)
main.add_command(verify)
main.add_command(mcp)
main.add_command(keys)
