"""The `citadel` command line. One module per command group; errors become messages.

A command's module is imported only when that command runs (or `--help` lists it), and the
modules keep their heavy imports inside the commands: `citadel ask` loads the engine and no
server code, `citadel --help` loads neither (docs/benchmarks.md, "Cold start")."""

from __future__ import annotations

import importlib
import os
import sys

import click

# name -> (module under citadel.cli, attribute): imported on first use.
COMMANDS = {
    "ingest": ("ingest", "ingest"),
    "sync": ("sync", "sync"),
    "ask": ("ask", "ask"),
    "chat": ("chat", "chat"),
    "agent": ("agent", "agent"),
    "demo-data": ("agent", "demo_data"),
    "eval": ("eval", "eval_command"),
    "logs": ("logs", "logs"),
    "monitor": ("monitor", "monitor"),
    "serve": ("serve", "serve"),
    "kb": ("kb", "kb"),
    "llm": ("llm", "llm"),
    "verify": ("verify", "verify"),
    "mcp": ("mcp", "mcp"),
    "keys": ("keys", "keys"),
    "docs": ("docs", "docs"),
}

# Failures a user can act on: one line, no traceback. Named by module, not imported: an
# exception can only have been raised if its module was loaded, so the check never imports.
EXPECTED_ERRORS = (
    ("citadel.config", "ConfigError"),
    ("citadel.engine", "NotReady"),
    ("citadel.engine", "InvalidQuestion"),
    ("citadel.ingest.pipeline", "IngestError"),
    ("citadel.ingest.managed", "DocumentChangeError"),
    ("citadel.knowledge.snapshots", "SnapshotError"),
    ("citadel.retrieval.embedders.base", "EmbedderUnavailable"),
    ("citadel.retrieval.backends.base", "RetrievalError"),
    ("citadel.retrieval.rerankers.base", "RerankerUnavailable"),
)


def expected(exc: BaseException) -> bool:
    """Whether `exc` is a failure the user can act on (a message, exit code 1)."""
    if isinstance(exc, (FileNotFoundError, PermissionError)):
        return True
    for module_name, name in EXPECTED_ERRORS:
        module = sys.modules.get(module_name)
        if module is not None and isinstance(exc, getattr(module, name)):
            return True
    return False


class CitadelGroup(click.Group):
    """Imports each command on first use, and turns expected failures into one line on
    stderr and exit code 1, never a traceback."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module_name, attribute = COMMANDS[cmd_name]
            module = importlib.import_module(f"citadel.cli.{module_name}")
            self.add_command(getattr(module, attribute), cmd_name)
        return self.commands.get(cmd_name)

    def invoke(self, ctx: click.Context):  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise
        except Exception as exc:
            if expected(exc):
                click.echo(f"Error: {exc}", err=True)
                sys.exit(1)
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
