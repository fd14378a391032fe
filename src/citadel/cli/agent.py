"""`citadel agent` (ask the support agent as a customer) and `citadel demo-data`."""

from __future__ import annotations

import datetime as dt

import click


def render_response(response) -> str:
    from citadel.cli.ask import render_answer

    lines = [response.message, ""]
    lines.append(f"Order system (authoritative) — intent {response.intent}, "
                 f"decided by {response.decider}:")
    if not response.business:
        lines.append("  (no order lookups)")
    for r in response.business:
        args = ", ".join(f"{k}={v!r}" for k, v in r.call.arguments.items())
        lines.append(f"  {r.call.name}({args}) -> {r.outcome}")
    if response.answer is not None:
        lines.append("Policy (knowledge base, cited):")
        lines.extend("  " + line for line in render_answer(response.answer).splitlines())
    if response.degraded:
        lines.append("(degraded: " + "; ".join(response.degraded_reasons) + ")")
    return "\n".join(lines)


@click.command()
@click.argument("question")
@click.option("--customer", "customer_id", default=None,
              help="Act as this customer (local use; the customer must exist).")
@click.option("--api-key", default=None, envvar="CITADEL_API_KEY",
              help="Authenticate with a customer API key instead of --customer.")
@click.option("--order-id", type=click.IntRange(1, 9_999_999_999), default=None,
              help="The order the question is about.")
@click.option("--idempotency-key", default=None, help="Retries with one key refund at most once.")
@click.option("--json", "as_json", is_flag=True, help="Print the whole response as JSON.")
def agent(question: str, customer_id: str | None, api_key: str | None, order_id: int | None,
          idempotency_key: str | None, as_json: bool) -> None:
    """Ask the support agent QUESTION as a customer: order facts from the business database,
    policy from the knowledge base with verified citations."""
    from citadel.agent.agent import InvalidRequest
    from citadel.agent.auth import AuthError, authenticate_key, local_customer
    from citadel.agent.db import BusinessUnavailable
    from citadel.agent.factory import open_agent
    from citadel.agent.records import IDEMPOTENCY_KEY_PATTERN
    from citadel.config import Settings

    if (customer_id is None) == (api_key is None):
        raise click.UsageError("give exactly one of --customer ID or --api-key KEY")
    if idempotency_key is not None:
        import re

        if not re.match(IDEMPOTENCY_KEY_PATTERN, idempotency_key):
            raise click.UsageError("--idempotency-key: 8-128 characters of A-Z a-z 0-9 _ . : -")
    settings = Settings.load()
    try:
        support = open_agent(settings)
    except BusinessUnavailable as exc:
        raise click.ClickException("I can't check your order right now: the business database "
                                   f"is unavailable ({exc})") from None
    try:
        try:
            who = (local_customer(support.db, customer_id) if customer_id is not None
                   else authenticate_key(support.db, api_key))
        except AuthError as exc:
            raise click.ClickException(str(exc)) from None
        except BusinessUnavailable:
            raise click.ClickException("I can't check your order right now: the business "
                                       "database is unavailable") from None
        try:
            response = support.respond(question, who, order_id=order_id,
                                       idempotency_key=idempotency_key)
        except InvalidRequest as exc:
            raise click.ClickException(str(exc)) from None
    finally:
        support.close()
    click.echo(response.model_dump_json(indent=2) if as_json else render_response(response))


@click.command("demo-data")
@click.option("--today", type=click.DateTime(["%Y-%m-%d"]), default=None,
              help="Date the demo is relative to (default: today, UTC).")
def demo_data(today: dt.datetime | None) -> None:
    """Create (or reset) the demo customers, API keys and orders in the business database."""
    from citadel.agent.db import BusinessUnavailable
    from citadel.agent.demo_data import seed_demo_data
    from citadel.agent.factory import business_db
    from citadel.config import Settings

    settings = Settings.load()
    db = business_db(settings, migrate_schema=False)
    try:
        customers = seed_demo_data(db, today.date() if today else None)
    except BusinessUnavailable as exc:
        raise click.ClickException(f"the business database is unavailable: {exc}") from None
    finally:
        db.close()
    click.echo(f"demo data written to {db.description}")
    for c in customers:
        click.echo(f"  customer {c.customer_id} ({c.name})  API key: {c.api_key}")
        for o in c.orders:
            click.echo(f"    order #{o.order_id}: {o.note}")
    if not settings.business_dsn:
        click.echo("(set CITADEL_BUSINESS_DSN=postgresql://... to use PostgreSQL instead)")
