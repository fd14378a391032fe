"""`citadel llm`: the local language models that ship as PyPI part packages.

    citadel llm models              # what is known, installed, assembled
    citadel llm assemble [NAME]     # parts -> one verified .gguf under <home>/models
    citadel llm serve [NAME]        # a llama.cpp server on 127.0.0.1 for the openai generator

In-process instead: CITADEL_GENERATOR=local starts the same server inside `citadel ask`,
`citadel serve` or `citadel eval` (settings llm_local_model, llm_threads, llm_context).
"""

from __future__ import annotations

import contextlib
import shlex
import signal
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from citadel.answering.generators.model_packages import ModelUnavailable
    from citadel.config import Settings


@click.group()
def llm() -> None:
    """Local language models installed from PyPI part packages (no download at run time)."""


@llm.command("models")
def models() -> None:
    """List the local models: installed parts, assembled file."""
    from citadel.answering.generators.model_packages import (
        DEFAULT_MODEL,
        MODELS,
        ModelUnavailable,
        is_assembled,
        model_path,
        part_files,
    )
    from citadel.config import Settings

    models_dir = _models_dir(Settings.load())
    for model in MODELS.values():
        try:
            part_files(model)
            installed = "parts installed"
        except ModelUnavailable:
            installed = "parts missing"
        assembled = ("assembled: " + str(model_path(models_dir, model))
                     if is_assembled(models_dir, model) else "not assembled")
        default = " (default)" if model.name == DEFAULT_MODEL else ""
        click.echo(f"{model.name}{default}: {model.description}, {model.size / 1e6:,.0f} MB; "
                   f"{installed}; {assembled}")
        if installed == "parts missing":
            click.echo(f"    install: {model.install_command()}")


def _models_dir(settings: Settings) -> Path:
    from citadel.answering.generators.model_packages import default_models_dir

    return settings.llm_models_dir or default_models_dir()


def _assemble(settings: Settings, name: str | None):
    """The model NAME (None: the default), assembled, and its path."""
    from citadel.answering.generators.model_packages import (
        DEFAULT_MODEL,
        assemble,
        get_model,
        is_assembled,
        model_path,
    )

    model = get_model(DEFAULT_MODEL if name is None else name)
    models_dir = _models_dir(settings)
    if is_assembled(models_dir, model):
        return model, model_path(models_dir, model)
    with click.progressbar(length=model.size, label=f"assembling {model.name}",
                           file=sys.stderr) as bar:
        done = [0]

        def progress(written: int, total: int) -> None:
            bar.update(written - done[0])
            done[0] = written

        path = assemble(models_dir, model, progress)
    click.echo(f"verified {path} (SHA-256 {model.sha256[:16]}…)", err=True)
    return model, path


def _model_error(exc: ModelUnavailable) -> click.ClickException:
    return click.ClickException(str(exc))


@llm.command("assemble")
@click.argument("name", required=False)
def assemble_command(name: str | None) -> None:
    """Join a model's installed parts into one file and verify its size and SHA-256."""
    from citadel.answering.generators.model_packages import ModelUnavailable
    from citadel.config import Settings

    try:
        _, path = _assemble(Settings.load(), name)
    except ModelUnavailable as exc:
        raise _model_error(exc) from None
    click.echo(str(path))


@llm.command("serve")
@click.argument("name", required=False)
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="Port on 127.0.0.1 (0: a free one).")
@click.option("--context", type=click.IntRange(512, 131_072), default=None,
              help="Tokens per request (default: the llm_context setting, 4096).")
@click.option("--threads", type=click.IntRange(0, 256), default=None,
              help="CPU threads (default: the llm_threads setting; 0: one per CPU).")
@click.option("--parallel", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Requests decoded at once (each gets its own context).")
@click.option("--api-key", envvar="CITADEL_LLM_API_KEY", default=None,
              help="Key clients must send (default: $CITADEL_LLM_API_KEY, else a random one).")
def serve(name: str | None, port: int, context: int | None, threads: int | None, parallel: int,
          api_key: str | None) -> None:
    """Serve a local model over the OpenAI chat-completions protocol on 127.0.0.1."""
    from citadel.answering.generators.llama_server import LlamaServer
    from citadel.answering.generators.model_packages import ModelUnavailable
    from citadel.config import Settings

    settings = Settings.load()
    try:
        model, path = _assemble(settings, name)
        click.echo(f"loading {model.name}…", err=True)
        server = LlamaServer(path, alias=model.name, port=port,
                             context=context or settings.llm_context,
                             threads=settings.llm_threads if threads is None else threads,
                             parallel=parallel, api_key=api_key)
    except ModelUnavailable as exc:
        raise _model_error(exc) from None
    with server:
        click.echo(f"{model.name} on {server.base_url} ({server.threads} threads, "
                   f"{server.context} tokens per request). Point Citadel at it with:", err=True)
        env = {"CITADEL_GENERATOR": "openai", "CITADEL_LLM_BASE_URL": server.base_url,
               "CITADEL_LLM_MODEL": model.name}
        click.echo("  export " + " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items()),
                   err=True)
        if api_key is None:
            click.echo(f"  export CITADEL_LLM_API_KEY={shlex.quote(server.api_key)}", err=True)
        click.echo("Ctrl-C stops it.", err=True)
        signal.signal(signal.SIGTERM, _interrupt)
        with contextlib.suppress(KeyboardInterrupt):
            while True:
                time.sleep(3600)
    click.echo("stopped.", err=True)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt
