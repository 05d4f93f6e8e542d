"""An OAuth-protected MCP server for the sign-in tests, built with the `mcp` SDK's auth.

Run as `python tests/mcp/oauth_server.py` with `MCP_TEST_DIR` set: it binds a free port on
127.0.0.1, writes it to `MCP_TEST_DIR/port`, and serves both the authorization server (the
SDK's routes: metadata, dynamic client registration, `/authorize`, `/token`) and the resource
server (streamable HTTP at `/mcp`, refusing requests without a valid bearer token) in one app.

`/authorize` approves at once (no login page): it redirects to the client's redirect URI with a
code, as an authorization server does after the person signs in, so a test can follow the
redirect with httpx. Each step leaves a count file in `MCP_TEST_DIR` (`registered`,
`authorized`, `refreshed`), so a test can tell what the client did. Tokens are random and kept in
memory; a refresh replaces both tokens and revokes the old access token.
"""

from __future__ import annotations

import os
import secrets
import socket
import time
from pathlib import Path

import uvicorn
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

TOKEN_LIFETIME_S = 3600


def _dir() -> Path:
    return Path(os.environ["MCP_TEST_DIR"])


def _count(name: str) -> None:
    path = _dir() / name
    n = int(path.read_text()) if path.exists() else 0
    path.with_suffix(".tmp").write_text(str(n + 1))
    os.replace(path.with_suffix(".tmp"), path)


class Provider:
    """An in-memory authorization server that approves every authorization request."""

    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info
        _count("registered")

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        code = secrets.token_urlsafe(24)
        assert client.client_id is not None
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        _count("authorized")
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        expires = int(time.time()) + TOKEN_LIFETIME_S
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=expires, resource=resource
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource
        )
        return OAuthToken(
            access_token=access,
            expires_in=TOKEN_LIFETIME_S,
            refresh_token=refresh,
            scope=" ".join(scopes) or None,
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        return self._issue(
            authorization_code.client_id, authorization_code.scopes, authorization_code.resource
        )

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        self.refresh.pop(refresh_token.token, None)
        for token, entry in list(self.access.items()):
            if entry.client_id == refresh_token.client_id:
                del self.access[token]  # the old access token stops working
        _count("refreshed")
        return self._issue(
            refresh_token.client_id, scopes or refresh_token.scopes, refresh_token.resource
        )

    async def load_access_token(self, token: str) -> AccessToken | None:
        entry = self.access.get(token)
        if entry is None or (entry.expires_at is not None and entry.expires_at < time.time()):
            return None
        return entry

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)


def main() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    # Listening before the port is announced: a client that connects while uvicorn is still
    # starting waits in the backlog instead of being refused.
    sock.listen(128)
    port = sock.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    server = MCPServer(
        "xum-oauth-test",
        log_level="CRITICAL",
        auth_server_provider=Provider(),
        auth=AuthSettings(
            issuer_url=base,
            resource_server_url=f"{base}/mcp",
            validate_token_resource=False,
            client_registration_options=ClientRegistrationOptions(enabled=True),
        ),
    )

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text back, unchanged."""
        return text

    app = server.streamable_http_app()
    (_dir() / "port.tmp").write_text(str(port))
    os.replace(_dir() / "port.tmp", _dir() / "port")
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
