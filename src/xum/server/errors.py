"""The API's one error shape: `{"error": {"code", "message", "hint"?}}`, and the mapping from
xum's typed errors to HTTP statuses."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from xum.core.errors import ConfigError, SessionBusyError, StoreError, XumError


class ApiError(Exception):
    """Raised by route handlers; rendered in the shared error shape."""

    def __init__(self, status: int, code: str, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.hint = hint


def not_found(what: str, hint: str | None = None) -> ApiError:
    return ApiError(404, "not_found", what, hint)


def error_body(code: str, message: str, hint: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message}
    if hint:
        body["hint"] = hint
    return {"error": body}


def error_response(
    status: int,
    code: str,
    message: str,
    hint: str | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    return JSONResponse(error_body(code, message, hint), status_code=status, headers=headers)


# Typed errors of the layers below whose status is not the default 400.
_CODE_STATUS = {
    "workspace_not_found": 404,
    "workspace_busy": 409,
    "workspace_dirty": 409,
    "name_taken": 409,
    "invalid_name": 422,
    "usage_error": 422,
    "agent_error": 422,
    "conflict": 409,  # the host: the action needs the workspace idle
    "invalid_request": 422,
}


def from_xum_error(exc: XumError) -> ApiError:
    """A typed xum error as an API error: configuration problems are the client's to fix (422),
    a busy session is a conflict (409), the rest a bad request (400)."""
    from xum.llm.errors import LLMError

    status = _CODE_STATUS.get(exc.code)
    if status is not None:
        return ApiError(status, exc.code, exc.message, exc.hint)
    if isinstance(exc, SessionBusyError):
        return ApiError(409, "session_busy", exc.message, exc.hint)
    if isinstance(exc, ConfigError):
        return ApiError(422, "config_error", exc.message, exc.hint)
    if isinstance(exc, LLMError) and exc.kind == "config":
        return ApiError(422, "config_error", exc.message, exc.hint)
    if isinstance(exc, StoreError):
        return ApiError(409, exc.code, exc.message, exc.hint)
    return ApiError(400, exc.code, exc.message, exc.hint)


_STATUS_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "invalid_request",
}


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        loc = ".".join(str(p) for p in err.get("loc", ()) if p not in ("body",)) or "body"
        parts.append(f"{loc}: {err.get('msg', 'invalid')}")
    return "; ".join(parts) or "invalid request"


def install_error_handlers(app: FastAPI) -> None:
    async def api_error(_request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ApiError)
        return error_response(exc.status, exc.code, exc.message, exc.hint)

    async def xum_error(_request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, XumError)
        api = from_xum_error(exc)
        return error_response(api.status, api.code, api.message, api.hint)

    async def validation(_request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        return error_response(422, "invalid_request", _validation_message(exc))

    async def http_error(_request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        code = _STATUS_CODES.get(exc.status_code, "error")
        detail = exc.detail if isinstance(exc.detail, str) else code.replace("_", " ")
        return error_response(exc.status_code, code, detail, headers=dict(exc.headers or {}))

    async def unexpected(_request: Request, exc: Exception) -> JSONResponse:
        # Never echo the exception text: it could carry a path or a value we must not leak.
        return error_response(
            500, "internal", f"internal error ({type(exc).__name__})", "see the server's output"
        )

    app.add_exception_handler(ApiError, api_error)
    app.add_exception_handler(XumError, xum_error)
    app.add_exception_handler(RequestValidationError, validation)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(Exception, unexpected)
