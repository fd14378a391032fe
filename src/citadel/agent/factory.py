"""Builds a `SupportAgent` from `Settings`: business database (migrated), knowledge base
(optional: without one the agent still serves business facts, degraded), and decider."""

from __future__ import annotations

import os

from citadel.agent.agent import SupportAgent
from citadel.agent.db import BusinessDB, open_business_db
from citadel.agent.decider import Decider, RuleDecider
from citadel.agent.migrations import migrate
from citadel.config import ConfigError, Settings


def business_db(settings: Settings, *, migrate_schema: bool = True) -> BusinessDB:
    try:
        db = open_business_db(settings.business_dsn, settings.home)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    if migrate_schema:
        try:
            migrate(db)
        except BaseException:
            db.close()
            raise
    return db


def decider_for(settings: Settings) -> Decider:
    choice = settings.agent_decider
    if choice == "auto":
        choice = "openai" if settings.generator == "openai" else "rules"
    if choice == "rules":
        return RuleDecider()
    if choice == "openai":
        from citadel.agent.openai_decider import OpenAIToolDecider

        key = (settings.llm_api_key.get_secret_value() if settings.llm_api_key is not None
               else os.environ.get("OPENAI_API_KEY"))
        return OpenAIToolDecider(settings.llm_base_url, settings.llm_model, api_key=key,
                                 timeout_s=settings.llm_timeout)
    raise ConfigError(f"unknown agent_decider {settings.agent_decider!r}: choose auto, rules "
                      "or openai")


def open_agent(settings: Settings, *, engine=None, db: BusinessDB | None = None) -> SupportAgent:
    """`engine=None` opens the active knowledge base; if there is none the agent runs
    without policy answers and says so (`degraded`)."""
    from citadel.engine import Engine

    problem = None
    if engine is None:
        try:
            engine = Engine.open(settings)
        except Exception as exc:  # no KB / bad KB: business facts are still served
            problem = str(exc)
    db = db or business_db(settings)
    return SupportAgent(db, engine, decider_for(settings), engine_problem=problem,
                        max_question_chars=settings.max_question_chars)
