"""`citadel chat`: questions in a thread, in the terminal. Each line is a question, answered
with the questions before it, so a follow-up ("And standard delivery?", "How long does that
take?") is answered as the question it asks, standing alone."""

from __future__ import annotations

import sys

import click

from citadel.cli.ask import render_answer

NEW_THREAD = ("new", "/new")
STOP = ("exit", "quit", "/exit", "/quit")


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print each Answer as one line of JSON.")
@click.option("--top-k", type=click.IntRange(1, 100), default=None)
@click.option("--tenant", default=None,
              help="Also this tenant's documents (default: public documents only).")
@click.option("--category", default=None, help="Only documents of this category.")
@click.option("--why", is_flag=True, help="Also say why each answer is what it is.")
def chat(as_json: bool, top_k: int | None, tenant: str | None, category: str | None,
         why: bool) -> None:
    """Ask questions in a thread, one per line, until `exit` or the end of the input.

    Each question is answered with the ones before it (at most 8): a follow-up is answered
    as the question it stands for, shown as "Answering: …". `new` starts a new thread.
    Citations come from each question's own retrieval. A question that cannot be asked (too
    long) is refused with a message and the thread goes on; the exit code is then 1."""
    from citadel.answering.follow_up import MAX_TURNS
    from citadel.config import Settings
    from citadel.engine import Engine, InvalidQuestion
    from citadel.records import Turn

    engine = Engine.open(Settings.load())
    interactive = sys.stdin.isatty()
    history: list[Turn] = []
    refused = 0
    try:
        while True:
            if interactive:
                click.echo("> ", nl=False)
            line = sys.stdin.readline()
            if not line:
                break
            question = line.strip()
            if not question:
                continue
            if question.lower() in STOP:
                break
            if question.lower() in NEW_THREAD:
                history.clear()
                click.echo("(a new thread)", err=True)
                continue
            if not interactive and not as_json:
                click.echo(f"> {question}")
            try:
                answer = engine.answer(question, history=history[-MAX_TURNS:], top_k=top_k,
                                       tenant=tenant, category=category)
            except InvalidQuestion as exc:
                refused += 1
                click.echo(f"Error: {exc}", err=True)
                continue
            history.append(Turn(question=question, answer=answer.answer))
            click.echo(answer.model_dump_json() if as_json else render_answer(answer, why))
            if not as_json:
                click.echo()
    finally:
        engine.close()
    if refused:
        sys.exit(1)
