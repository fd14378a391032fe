"""`POST /v1/agent`: the support agent over HTTP, as a FastAPI router.

The caller is the customer whose API key is sent (`Authorization: Bearer <key>` or
`X-API-Key: <key>`); the request body has no customer field and rejects unknown fields, so
a forged identity in the body is refused (422) and never read. Mount with
`app.include_router(agent_router(lambda: agent))`.
"""

# No `from __future__ import annotations`: FastAPI must see the dependency objects in the
# signatures of the functions defined inside `agent_router`.
from collections.abc import Callable
from typing import Annotated

try:
    from fastapi import APIRouter, Depends, Header, HTTPException
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ImportError("the HTTP agent needs FastAPI: pip install 'citadel[server]'") from exc
from pydantic import BaseModel, ConfigDict, Field

from citadel.agent import wording
from citadel.agent.agent import InvalidRequest, SupportAgent
from citadel.agent.auth import AuthError, authenticate_key, credentials_from_headers
from citadel.agent.db import BusinessUnavailable
from citadel.agent.records import AgentResponse, Caller, IdempotencyKey, OrderId


class AgentRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=2000, description="The customer's request.")
    order_id: OrderId | None = Field(default=None, description="An order picked in the UI.")
    idempotency_key: IdempotencyKey | None = Field(
        default=None, description="Retries with the same key make at most one refund.")


class ErrorBody(BaseModel):
    detail: str


def agent_router(get_agent: Callable[[], SupportAgent]) -> APIRouter:
    router = APIRouter(tags=["agent"])

    def caller(
        authorization: Annotated[str | None, Header()] = None,
        x_api_key: Annotated[str | None, Header()] = None,
    ) -> Caller:
        key = credentials_from_headers(authorization, x_api_key)
        try:
            return authenticate_key(get_agent().db, key)
        except AuthError as exc:
            raise HTTPException(401, str(exc), headers={"WWW-Authenticate": "Bearer"}) from None
        except BusinessUnavailable:
            raise HTTPException(503, wording.UNAVAILABLE) from None

    @router.post(
        "/v1/agent", response_model=AgentResponse,
        responses={401: {"model": ErrorBody}, 422: {"model": ErrorBody},
                   503: {"model": ErrorBody}},
    )
    def post_agent(
        body: AgentRequest,
        who: Annotated[Caller, Depends(caller)],
        idempotency_key: Annotated[IdempotencyKey | None, Header()] = None,
    ) -> AgentResponse:
        """Answer a customer: business facts (authoritative, from the order system) apart from
        the cited policy answer."""
        try:
            return get_agent().respond(body.question, who, order_id=body.order_id,
                                       idempotency_key=body.idempotency_key or idempotency_key)
        except InvalidRequest as exc:
            raise HTTPException(422, str(exc)) from None

    return router
