"""The ASGI gate in front of every route, HTTP and WebSocket alike: Host and Origin checks, the
auth requirement, a request-size bound and security headers."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from xum.core.images import MAX_IMAGE_BYTES
from xum.server.auth import (
    COOKIE_NAME,
    bearer_token,
    cookie_value,
    header,
    is_loopback_host,
    origin_allowed,
    split_host_header,
    tokens_equal,
)
from xum.server.errors import error_body

if TYPE_CHECKING:
    from xum.server.state import ServerState

MAX_BODY_BYTES = 1024 * 1024
TOO_LARGE = (
    "payload_too_large",
    f"the request body is larger than the server's limit of {MAX_BODY_BYTES // (1024 * 1024)} MiB",
    "send a smaller request body",
)
# An image upload (the composer's paste or drop) is one image's raw bytes: its own, larger bound.
_IMAGE_UPLOAD = re.compile(r"^/api/workspaces/[^/]+/images$")
IMAGE_BODY_BYTES = MAX_IMAGE_BYTES


def body_limit(scope: Scope) -> int:
    """The largest body this request may carry."""
    if scope.get("method") == "POST" and _IMAGE_UPLOAD.match(scope.get("path", "")):
        return IMAGE_BODY_BYTES
    return MAX_BODY_BYTES


def _too_large(limit: int) -> tuple[str, str, str]:
    if limit == MAX_BODY_BYTES:
        return TOO_LARGE
    return (
        TOO_LARGE[0],
        f"the request body is larger than the server's limit of {limit:,} bytes for it",
        "an image may be at most 5 MB: scale it down or save it as JPEG",
    )


# The MCP sign-in callback: the browser arrives from the authorization server, and the route acts
# only on the unguessable state of a sign-in this server started (routes/mcp_oauth.py).
OPEN_API_PATHS = frozenset({"/api/auth/login", "/api/auth/status", "/api/mcp/oauth/callback"})

SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
]
CSP = (
    b"default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; "
    b"img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; "
    b"object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)


def needs_auth(path: str) -> bool:
    if path in OPEN_API_PATHS:
        return False
    return path.startswith("/api/") or path == "/api" or path == "/openapi.json"


class SecurityMiddleware:
    def __init__(self, app: ASGIApp, state: ServerState) -> None:
        self.app = app
        self.state = state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers: list[tuple[bytes, bytes]] = scope.get("headers", [])
        problem = self._check(scope, headers)
        if problem is not None:
            status, code, message, hint = problem
            await self._refuse(scope, receive, send, status, code, message, hint)
            return
        if scope["type"] == "http":
            length = header(headers, b"content-length")
            limit = body_limit(scope)
            if length is not None and (not length.isdigit() or int(length) > limit):
                await self._refuse(scope, receive, send, 413, *_too_large(limit))
                return
            await self._bounded(scope, receive, send, limit)
            return
        await self.app(scope, receive, send)

    async def _bounded(self, scope: Scope, receive: Receive, send: Send, limit: int) -> None:
        """Run the app with the body cut at MAX_BODY_BYTES. A body without a length (chunked)
        is counted as it arrives: past the limit the app is told the client went away (it stops
        reading; nothing more is held), whatever it answers to that is dropped, and the client
        gets 413. An error raised from `receive` instead would reach the route's body parser,
        which reports any failure as a malformed body (400)."""
        over = False
        seen = 0
        started = False
        outer = _with_headers(send, scope["path"])

        async def bounded_receive() -> Message:
            nonlocal over, seen
            if over:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    over = True
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if over and not started:
                return  # the app's answer to a body it never got whole
            if message["type"] == "http.response.start":
                started = True
            await outer(message)

        try:
            await self.app(scope, bounded_receive, guarded_send)
        except Exception:
            if not over:
                raise
        if over and not started:
            # The rest of the body is read and thrown away by the HTTP server (uvicorn discards
            # what arrives after the response), so the client can read this answer.
            await self._refuse(scope, receive, send, 413, *_too_large(limit))

    def _check(
        self, scope: Scope, headers: list[tuple[bytes, bytes]]
    ) -> tuple[int, str, str, str | None] | None:
        config = self.state.config
        host_header = header(headers, b"host")
        if config.loopback_only:
            name, _ = split_host_header(host_header or "")
            if not is_loopback_host(name):
                return (
                    403,
                    "forbidden_host",
                    "this server only answers requests addressed to localhost",
                    "bind it to another address with --host to reach it from elsewhere",
                )
        origin = header(headers, b"origin")
        if origin is not None:
            scheme = "https" if scope.get("scheme") in ("https", "wss") else "http"
            ok = origin_allowed(
                origin,
                host_header=host_header,
                scheme=scheme,
                forwarded_proto=header(headers, b"x-forwarded-proto"),
                allow_http_origin=config.allow_http_origin,
            )
            if not ok:
                return (403, "forbidden_origin", "requests from another origin are refused", None)
        auth: dict[str, Any] = {"kind": "none", "session": None}
        scope.setdefault("state", {})["auth"] = auth
        token = self.state.token
        if token is None:
            auth["kind"] = "disabled"
            return None
        if tokens_equal(bearer_token(headers), token):
            auth["kind"] = "token"
            return None
        sessions = self.state.browser_sessions
        cookie = cookie_value(headers, COOKIE_NAME)
        session = sessions.lookup(cookie) if sessions else None
        if session is not None:
            auth["kind"] = "cookie"
            auth["session"] = session
            return None
        # A session cookie this server does not know: the browser was signed in, and that
        # session ended (the token changed, or it was revoked). The sign-in page says so.
        auth["session_ended"] = bool(cookie)
        if needs_auth(scope["path"]):
            return (
                401,
                "unauthorized",
                "sign in first: this server needs its token",
                "open the sign-in link `xum server` printed, or send 'Authorization: Bearer <token>'",
            )
        return None

    async def _refuse(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        status: int,
        code: str,
        message: str,
        hint: str | None = None,
    ) -> None:
        if scope["type"] == "websocket":
            # Closing before accepting makes the server answer the handshake with HTTP 403.
            await send({"type": "websocket.close", "code": 1008, "reason": code})
            return
        headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
        response = JSONResponse(
            error_body(code, message, hint), status_code=status, headers=headers
        )
        await response(scope, receive, _with_headers(send, scope["path"]))


def _with_headers(send: Send, path: str) -> Send:
    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", []))
            names = {k.lower() for k, _ in headers}
            for key, value in SECURITY_HEADERS:
                if key not in names:
                    headers.append((key, value))
            content_type = next((v for k, v in headers if k.lower() == b"content-type"), b"")
            if content_type.startswith(b"text/html"):
                headers.append((b"content-security-policy", CSP))
            if path.startswith("/api/") or path == "/openapi.json":
                headers.append((b"cache-control", b"no-store"))
            message = {**message, "headers": headers}
        await send(message)

    return wrapped
