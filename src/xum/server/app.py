"""The ASGI application: routes, the security gate, error shapes, and the maintenance loop."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from fastapi import FastAPI

from xum import __version__
from xum.core import ownsecrets
from xum.server.errors import install_error_handlers
from xum.server.gate import SecurityMiddleware
from xum.server.state import ServerConfig, ServerState

log = logging.getLogger("xum.server")
SERVER_TOKEN_SECRET = "xum-server-token"  # its name in masked output: [secret:xum-server-token]


async def _maintain(state: ServerState) -> None:
    """Follow logs other processes write, close idle sessions, drop unused logs, and now and
    then compact idle workspaces (`/idle`)."""
    interval = state.config.maintenance_interval_s
    while True:
        await asyncio.sleep(interval)
        try:
            state.hub.poll_external()
            await state.hosts.close_idle()
            state.hub.trim()
            await state.hosts.maybe_compact_idle()
        except Exception:  # keep maintaining; say what broke
            log.exception("server maintenance failed")


def create_app(config: ServerConfig) -> FastAPI:
    from xum.server import static, ws
    from xum.server.routes import (
        auth,
        background,
        chats,
        context,
        external_agent_settings,
        external_agents,
        fallbacks,
        files,
        images,
        inbox,
        mcp,
        mcp_oauth,
        mcp_resources,
        plan,
        projects,
        review,
        safety,
        server_info,
        settings,
        turns,
        workspaces,
    )

    state = ServerState(config)

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        # The token (generated, or from a flag) is masked in every command's output, like the
        # provider keys: an agent can read server.lock, and must not hand the token on.
        ownsecrets.remember(SERVER_TOKEN_SECRET, config.token)
        task = asyncio.create_task(_maintain(state), name="xum server maintenance")
        try:
            yield
        finally:
            ownsecrets.forget(SERVER_TOKEN_SECRET)
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
            await state.hosts.shutdown()

    app = FastAPI(
        title="xum server API",
        version=__version__,
        description="REST API of `xum server` (docs/api.md). WebSocket: /api/ws.",
        docs_url=None,
        redoc_url=None,
        openapi_url="/openapi.json",
        lifespan=lifespan,
    )
    app.state.xum = state
    install_error_handlers(app)
    for router in (
        auth.router,
        server_info.router,
        projects.router,
        workspaces.router,
        external_agents.router,
        external_agent_settings.router,
        chats.router,
        turns.router,
        background.router,
        images.router,
        inbox.router,
        review.router,
        files.router,
        plan.router,
        context.router,
        settings.router,
        fallbacks.router,
        mcp.router,
        mcp_resources.router,
        mcp_oauth.router,
        safety.router,
        ws.router,
        static.router,  # last: its catch-all routes answer what nothing else does
    ):
        app.include_router(router)
    app.add_middleware(SecurityMiddleware, state=state)
    return app
