"""`POST /v1/agent`: the support agent over HTTP, as a FastAPI router.

The caller is the customer whose API key is sent (`Authorization: Bearer <key>` or
`X-API-Key: <key>`); the request body has no customer field and rejects unknown fields, so
a forged identity in the body is refused (422) and never read.

`create_app` mounts it (`citadel.server.agent` opens the agent lazily); its error handlers
give every error the app's `ErrorBody` shape (`{"error": {...}}`), which is what the
operation documents. Elsewhere mount it in an app with `install_error_handlers` too.
"""

# No `from __future__ import annotations`: FastAPI must see the dependency objects in the
# signatures of the functions defined inside `agent_router`.
from collections.abc import Callable
from typing import Annotated

try:
    from fastapi import APIRouter, Depends, Header, HTTPException, Request, Security
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ImportError("the HTTP agent needs FastAPI: pip install 'citadel[server]'") from exc
from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from citadel.agent import wording
from citadel.agent.agent import InvalidRequest, SupportAgent
from citadel.agent.auth import AuthError, authenticate_key, credentials_from_headers
from citadel.agent.db import BusinessUnavailable
from citadel.agent.records import (
    IDEMPOTENCY_KEY_PATTERN,
    AgentResponse,
    Caller,
    IdempotencyKey,
    OrderId,
)
from citadel.server.auth import API_KEY, BEARER  # one OpenAPI scheme for every endpoint
from citadel.server.errors import ERROR_RESPONSES
from citadel.server.models import ErrorBody
from citadel.server.request_log import answer_log_fields

# A header is absent or a string, never JSON null (which FastAPI would document for `| None`).
IDEMPOTENCY_HEADER = WithJsonSchema({"type": "string", "pattern": IDEMPOTENCY_KEY_PATTERN,
                                     "description": "Like the body's `idempotency_key`."})
RESPONSES = {
    401: {"model": ErrorBody, "description": "Missing or invalid API key."},
    **ERROR_RESPONSES,
    503: {"model": ErrorBody,
          "description": "The order system (business database) is unavailable or not set up."},
}


class AgentRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=2000, pattern=r"\S",
                          description="The customer's request.")
    order_id: OrderId | None = Field(default=None, description="An order picked in the UI.")
    idempotency_key: IdempotencyKey | None = Field(
        default=None, description="Retries with the same key make at most one refund.")


def agent_router(get_agent: Callable[[], SupportAgent]) -> APIRouter:
    router = APIRouter(tags=["agent"])

    def caller(
        request: Request,
        _bearer: Annotated[object, Security(BEARER)],
        _api_key: Annotated[object, Security(API_KEY)],
    ) -> Caller:
        key = credentials_from_headers(request.headers.get("authorization"),
                                       request.headers.get("x-api-key"))
        try:
            return authenticate_key(get_agent().db, key)
        except AuthError as exc:
            raise HTTPException(401, str(exc), headers={"WWW-Authenticate": "Bearer"}) from None
        except BusinessUnavailable:
            raise HTTPException(503, wording.UNAVAILABLE) from None

    @router.post("/v1/agent", response_model=AgentResponse, responses=RESPONSES,
                 summary="Ask the support agent as the authenticated customer")
    def post_agent(
        body: AgentRequest,
        request: Request,
        who: Annotated[Caller, Depends(caller)],
        idempotency_key: Annotated[IdempotencyKey | None, Header(), IDEMPOTENCY_HEADER] = None,
    ) -> AgentResponse:
        """Answer a customer: business facts (authoritative, from the order system) apart from
        the cited policy answer."""
        try:
            response = get_agent().respond(
                body.question, who, order_id=body.order_id,
                idempotency_key=body.idempotency_key or idempotency_key,
                request_id=getattr(request.state, "request_id", None),
                client_request_id=getattr(request.state, "client_request_id", None))
        except InvalidRequest as exc:
            raise HTTPException(422, str(exc)) from None
        log = getattr(request.state, "log", None)
        if log is not None:  # the app's request log line
            if response.answer is not None:
                log.update(answer_log_fields(response.answer))
            log.update(customer_id=who.customer_id, intent=response.intent,
                       degraded=response.degraded)
        return response

    return router
