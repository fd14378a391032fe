"""Every failure becomes a JSON `ErrorBody`: 4xx for the caller's mistakes, 503 when the
service is not ready, and a 500 only for a fault of ours (never for bad input)."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from citadel.engine import InvalidQuestion, NotReady
from citadel.server.auth import TENANT_NOT_ACCEPTED, AdminKeyRequired, TenantInRequest
from citadel.server.models import ErrorBody, ErrorDetail, FieldError
from citadel.server.public_errors import public_message

log = logging.getLogger("citadel.http")

_CODES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
          405: "method_not_allowed", 409: "conflict", 413: "too_large",
          415: "unsupported_media_type", 422: "invalid_request", 503: "not_ready"}

# Documented on every operation, so the OpenAPI schema describes what clients really get.
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "Malformed request (e.g. invalid JSON)."},
    422: {"model": ErrorBody, "description": "The request is well-formed but invalid."},
    503: {"model": ErrorBody, "description": "No servable knowledge base."},
}


# The OpenAI-compatible door answers errors as OpenAI does (`citadel.server.chat`), so the
# `openai` SDK and chat front-ends raise their usual exceptions with the message.
OPENAI_PATHS = ("/v1/chat/", "/v1/models")
_OPENAI_TYPES = {401: "invalid_request_error", 429: "rate_limit_error",
                 500: "server_error", 503: "server_error"}


def openai_style(path: str) -> bool:
    return path.startswith(OPENAI_PATHS)


def openai_error(status: int, message: str, code: str, request_id: str | None = None,
                 param: str | None = None) -> tuple[int, dict[str, Any]]:
    """OpenAI's error status and body: a request it cannot use is a 400 (not 422)."""
    status = 400 if status == 422 else status
    return status, {"error": {"message": message, "type": _OPENAI_TYPES.get(
        status, "invalid_request_error"), "param": param, "code": code,
        "request_id": request_id}}


def error_response(request: Request, status: int, message: str, code: str | None = None,
                   errors: list[FieldError] | None = None) -> JSONResponse:
    request_id = getattr(request.state, "request_id", None)
    if openai_style(request.url.path):
        param = ".".join(str(p) for p in errors[0].loc[1:]) if errors else None
        status, payload = openai_error(status, message, _openai_code(status, code),
                                       request_id, param or None)
        return JSONResponse(payload, status_code=status)
    body = ErrorBody(error=ErrorDetail(
        code=code or _CODES.get(status, "error"), message=message,
        request_id=request_id, errors=errors or [],
    ))
    return JSONResponse(body.model_dump(mode="json"), status_code=status)


def _openai_code(status: int, code: str | None) -> str:
    return "invalid_api_key" if status == 401 else code or _CODES.get(status, "error")


class ApiError(Exception):
    """An error with its own machine-readable code (e.g. `model_not_found`), and response
    headers if it needs them (`Retry-After`)."""

    def __init__(self, status: int, code: str, message: str,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.headers = status, code, headers or {}


async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
    response = error_response(request, exc.status, str(exc), exc.code)
    response.headers.update(exc.headers)
    return response


_EMPTY = {"string_too_short", "string_pattern_mismatch"}


def _field_errors(exc: RequestValidationError) -> list[FieldError]:
    return [
        FieldError(loc=[p if isinstance(p, int) else str(p) for p in e.get("loc", ())],
                   message=str(e.get("msg", "")), type=str(e.get("type", "")))
        for e in exc.errors()
    ]


async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
    errors = _field_errors(exc)
    if any(e.type == "json_invalid" for e in errors):
        return error_response(request, 400, "the request body is not valid JSON",
                              "invalid_json", errors)
    if any(e.loc[:1] == ["body"] and e.loc[-1:] == ["tenant"] and e.type == "extra_forbidden"
           for e in errors):  # in the body, or in a door's options (chat's `citadel`)
        # Clients written for the old body field learn what to do instead.
        return error_response(request, 422, TENANT_NOT_ACCEPTED, "tenant_not_accepted", errors)
    if any(e.loc[-1:] == ["question"] and e.type in _EMPTY for e in errors):
        return error_response(request, 422, "the question is empty", "invalid_question", errors)
    summary = "; ".join(f"{'.'.join(str(p) for p in e.loc[1:]) or e.loc[0]}: {e.message}"
                        for e in errors[:5])
    return error_response(request, 422, f"invalid request: {summary}", errors=errors)


async def _http(request: Request, exc: HTTPException) -> JSONResponse:
    response = error_response(request, exc.status_code, str(exc.detail))
    for key, value in (exc.headers or {}).items():
        response.headers[key] = value
    return response


async def _tenant_in_request(request: Request, exc: TenantInRequest) -> JSONResponse:
    return error_response(request, 422, str(exc), "tenant_not_accepted")


async def _admin_key_required(request: Request, exc: AdminKeyRequired) -> JSONResponse:
    return error_response(request, 403, str(exc), "admin_key_required")


async def _invalid_question(request: Request, exc: InvalidQuestion) -> JSONResponse:
    return error_response(request, 422, str(exc), "invalid_question")


async def _not_ready(request: Request, exc: NotReady) -> JSONResponse:
    # The reason says what to do (`run citadel ingest`), never where the server keeps its files.
    return error_response(request, 503,
                          public_message(str(exc), request.app.state.provider.settings.home))


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error in %s %s", request.method, request.url.path)
    return error_response(request, 500, f"internal error: {type(exc).__name__}", "internal")


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(HTTPException, _http)
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(InvalidQuestion, _invalid_question)
    app.add_exception_handler(TenantInRequest, _tenant_in_request)
    app.add_exception_handler(AdminKeyRequired, _admin_key_required)
    app.add_exception_handler(NotReady, _not_ready)
    app.add_exception_handler(Exception, _unexpected)
