"""Signing in to HTTP MCP servers that require OAuth (`xum.workspaces.mcp.oauth`).

* `POST /api/mcp/oauth/start` `{"name", "scope", "project"}`: starts the SDK's flow for that
  saved server, with xum's own `/api/mcp/oauth/callback` (on the address the browser uses) as
  the redirect URI; answers the authorization URL for the browser to open, or `signedIn: true`
  when the stored tokens already work.
* `GET /api/mcp/oauth/callback?code&state`: where the authorization server sends the browser
  back. It needs no xum token (the browser arrives from another site): it acts only on the
  unguessable `state` of a sign-in this server started, hands the code to the waiting flow and
  answers a small page saying whether it worked. The tokens never appear in it.
* `POST /api/mcp/oauth/sign-out` (same body): forgets the server's tokens and registration.
"""

from __future__ import annotations

import asyncio
import html
from pathlib import Path
from typing import TYPE_CHECKING

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse
from pydantic import BaseModel

from xum.core.paths import logs_dir
from xum.server.errors import ApiError, not_found
from xum.server.routes.mcp import TestBody, _read_global, _read_repo
from xum.server.routes.projects import known_project
from xum.workspaces.mcp import config as mc

if TYPE_CHECKING:
    from mcp.client.auth import OAuthClientProvider

router = APIRouter(tags=["mcp"])

CALLBACK_PATH = "/api/mcp/oauth/callback"


class SignInStarted(BaseModel):
    authorizationUrl: str | None
    signedIn: bool


def _spec(body: TestBody) -> mc.ServerSpec:
    if body.scope == "global":
        servers = _read_global()[2]
    else:
        servers = _read_repo(known_project(body.project or "").path)[1]
    spec = servers.get(body.name)
    if spec is None:
        raise not_found(f"no {body.scope} MCP server named {body.name!r}")
    if spec.url is None:
        raise ApiError(
            422,
            "invalid_request",
            f"MCP server {body.name!r} runs as a command; only HTTP servers sign in",
        )
    return spec


@router.post("/api/mcp/oauth/start", response_model=SignInStarted)
async def start_sign_in(body: TestBody, request: Request) -> SignInStarted:
    from xum.workspaces.mcp.client import Connection, McpError
    from xum.workspaces.mcp.oauth import SIGN_IN_TIMEOUT_S, begin_sign_in

    spec = await asyncio.to_thread(_spec, body)
    redirect_uri = str(request.base_url).rstrip("/") + CALLBACK_PATH

    async def connect(auth: OAuthClientProvider) -> None:
        conn = Connection(
            spec,
            cwd=str(Path.home()),
            env={},
            mask=lambda text: text,
            log_path=logs_dir() / "mcp" / "sign-in.log",
            auth=auth,
        )
        try:
            await conn.start(SIGN_IN_TIMEOUT_S)
        except McpError as exc:
            raise RuntimeError(f"MCP server {spec.name!r}: {exc}") from None
        await conn.close()

    try:
        url = await begin_sign_in(
            spec.name, spec.url or "", dict(spec.headers), redirect_uri, connect=connect
        )
    except RuntimeError as exc:
        raise ApiError(
            502,
            "mcp_sign_in_failed",
            f"signing in to MCP server {spec.name!r} failed: {exc}",
            "check the server's URL; the server must support OAuth sign-in",
        ) from None
    return SignInStarted(authorizationUrl=url, signedIn=url is None)


_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>xum: MCP sign-in</title></head>
<body style="font-family: system-ui, sans-serif; margin: 3em">
<h1>{title}</h1><p>{text}</p></body></html>
"""


@router.get(CALLBACK_PATH, response_class=HTMLResponse, include_in_schema=False)
async def sign_in_callback(
    state: str = Query(default="", max_length=500),
    code: str | None = Query(default=None, max_length=4000),
    error: str | None = Query(default=None, max_length=500),
    iss: str | None = Query(default=None, max_length=2000),
) -> HTMLResponse:
    from xum.workspaces.mcp.oauth import complete_sign_in

    try:
        server, problem = await complete_sign_in(state, code, error, iss)
    except KeyError:
        page = _PAGE.format(
            title="No sign-in is waiting",
            text="This link does not belong to a sign-in xum started, or it was already used. "
            "Start again with Sign in in Settings → MCP.",
        )
        return HTMLResponse(page, status_code=400)
    name = html.escape(server)
    if problem is not None:
        page = _PAGE.format(
            title=f"Signing in to {name} failed",
            text=html.escape(problem) + ". Try Sign in again in Settings → MCP.",
        )
        return HTMLResponse(page, status_code=400)
    page = _PAGE.format(
        title=f"Signed in to {name}",
        text="You can close this tab. Workspaces use the server from their next message on.",
    )
    return HTMLResponse(page)


@router.post("/api/mcp/oauth/sign-out", response_model=SignInStarted)
async def sign_out(body: TestBody) -> SignInStarted:
    from xum.workspaces.mcp.oauth import sign_out as forget

    spec = await asyncio.to_thread(_spec, body)
    await asyncio.to_thread(forget, spec.url or "")
    return SignInStarted(authorizationUrl=None, signedIn=False)
