"""Signing in, signing out, and the browser sessions list."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, Field

from xum.server.auth import COOKIE_MAX_AGE_S, COOKIE_NAME, BrowserSession, tokens_equal
from xum.server.errors import ApiError, not_found
from xum.server.state import ServerState, get_state

router = APIRouter(prefix="/api/auth", tags=["auth"])


class LoginBody(BaseModel):
    token: str = Field(max_length=4096)


class Ok(BaseModel):
    ok: bool = True


class AuthStatus(BaseModel):
    authRequired: bool
    authenticated: bool
    # The browser sent a session cookie this server does not accept: its sign-in ended (the
    # server's token changed, or the session was revoked or signed out elsewhere).
    sessionEnded: bool = False


class SessionRow(BaseModel):
    id: str
    createdAt: int
    lastSeenAt: int
    userAgent: str
    current: bool


class SessionList(BaseModel):
    sessions: list[SessionRow]


class Revoked(BaseModel):
    revoked: int


def is_https(request: Request) -> bool:
    proto = request.headers.get("x-forwarded-proto", "").split(",")[0].strip().lower()
    return request.url.scheme == "https" or proto == "https"


def set_session_cookie(response: Response, request: Request, secret: str) -> None:
    response.set_cookie(
        COOKIE_NAME,
        secret,
        max_age=COOKIE_MAX_AGE_S,
        path="/",
        httponly=True,
        samesite="strict",
        secure=is_https(request),
    )


def sign_in(state: ServerState, request: Request, response: Response) -> None:
    assert state.browser_sessions is not None
    secret, _session = state.browser_sessions.create(request.headers.get("user-agent", ""))
    set_session_cookie(response, request, secret)


def current_session(request: Request) -> BrowserSession | None:
    auth: dict[str, Any] = request.scope.get("state", {}).get("auth", {})
    session = auth.get("session")
    return session if isinstance(session, BrowserSession) else None


@router.get("/status", response_model=AuthStatus)
async def auth_status(request: Request) -> AuthStatus:
    state = get_state(request)
    auth = request.scope.get("state", {}).get("auth", {})
    return AuthStatus(
        authRequired=state.token is not None,
        authenticated=auth.get("kind") in ("token", "cookie", "disabled"),
        sessionEnded=bool(auth.get("session_ended")),
    )


@router.post("/login", response_model=Ok)
async def login(body: LoginBody, request: Request, response: Response) -> Ok:
    state = get_state(request)
    if state.token is None:
        return Ok()
    if not tokens_equal(body.token.strip(), state.token):
        raise ApiError(401, "unauthorized", "that is not this server's token")
    sign_in(state, request, response)
    return Ok()


@router.post("/logout", response_model=Ok)
async def logout(request: Request, response: Response) -> Ok:
    state = get_state(request)
    session = current_session(request)
    if session is not None and state.browser_sessions is not None:
        state.browser_sessions.revoke(session.public_id)
    response.delete_cookie(COOKIE_NAME, path="/", httponly=True, samesite="strict")
    return Ok()


@router.get("/sessions", response_model=SessionList)
async def list_sessions(request: Request) -> SessionList:
    state = get_state(request)
    if state.browser_sessions is None:
        return SessionList(sessions=[])
    current = current_session(request)
    return SessionList(
        sessions=[
            SessionRow(
                id=s.public_id,
                createdAt=s.created_at,
                lastSeenAt=s.last_seen_at,
                userAgent=s.user_agent,
                current=current is not None and s.public_id == current.public_id,
            )
            for s in state.browser_sessions.list()
        ]
    )


@router.delete("/sessions/{session_id}", response_model=Ok)
async def revoke_session(session_id: str, request: Request) -> Ok:
    state = get_state(request)
    if state.browser_sessions is None or not state.browser_sessions.revoke(session_id):
        raise not_found(f"no browser session '{session_id[:40]}'")
    return Ok()


@router.post("/sessions/revoke-others", response_model=Revoked)
async def revoke_others(request: Request) -> Revoked:
    state = get_state(request)
    if state.browser_sessions is None:
        return Revoked(revoked=0)
    current = current_session(request)
    count = state.browser_sessions.revoke_others(current.public_id if current else None)
    return Revoked(revoked=count)
