"""OAuth for HTTP MCP servers that require it, through the `mcp` SDK's client-side OAuth.

Every HTTP server without a static `Authorization` header is reached through the SDK's
`OAuthClientProvider`: a server that does not ask for OAuth never notices; one that answers 401
with OAuth metadata gets the SDK's flow (discovery, dynamic client registration, authorization
code with PKCE, token exchange, refresh). Two ways of driving it:

* **A session's start** (`session_auth`) never waits for a person: when the flow reaches the
  point where someone must sign in, `NeedsSignIn` is raised and the server is reported as
  needing sign-in (`needs-sign-in`). Stored tokens are used, and refreshed by the SDK when they
  expired (a stored token past its expiry is handed to the SDK without its access token, so the
  SDK refreshes it before the first request instead of sending a token the server refuses).
* **A sign-in** (`begin_sign_in`, the **Sign in** buttons of Settings → MCP and of the workspace
  MCP dialog) runs
  the same flow in a task: the SDK builds the authorization URL, which is handed to the browser;
  the authorization server redirects back to xum's `/api/mcp/oauth/callback` with the code and
  the state, `complete_sign_in` hands them to the waiting flow, the SDK exchanges the code and
  the tokens are stored. Sessions retry the server with their next message.

Tokens and client registrations are kept in `$XUM_ROOT/mcp-oauth.json` (0600, like
`secrets.json`), keyed by the server's URL. They never enter a log or an event, and xum
registers the tokens it holds with its own-secrets masker, so a command that prints one shows
`[secret:mcp-oauth]` instead.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import stat
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import orjson

from xum.core import ownsecrets
from xum.core.errors import ConfigError
from xum.core.fsutil import atomic_write_bytes
from xum.core.jsonfile import read_json_object
from xum.core.lock import locked
from xum.core.paths import ensure_root, xum_root

if TYPE_CHECKING:
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthToken

STORE_NAME = "mcp-oauth.json"
SIGN_IN_TIMEOUT_S = 600.0  # how long a started sign-in waits for the browser to come back
EXPIRY_MARGIN_S = 30.0  # a token this close to its expiry is refreshed first
# Where the start of a session says it would come back to; a real sign-in uses the URL of the
# xum server the browser talks to, and a registration made for another one is made again.
DEFAULT_REDIRECT = "http://127.0.0.1/api/mcp/oauth/callback"
MASK_NAME = "mcp-oauth"


class NeedsSignIn(Exception):
    """The server needs someone to sign in; a session's start does not wait for that."""


class _QuietSignInNeeded(logging.Filter):
    """The SDK logs every failed flow with its traceback; a sign-in that is merely needed is
    reported by xum (status and advisory), not as an error in the log."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, NeedsSignIn)


_sdk_log_quieted = False


def _quiet_sdk_log() -> None:
    global _sdk_log_quieted
    if not _sdk_log_quieted:
        logging.getLogger("mcp.client.auth.oauth2").addFilter(_QuietSignInNeeded())
        _sdk_log_quieted = True


def store_path() -> Path:
    return xum_root() / STORE_NAME


def _check_mode(path: Path) -> None:
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        raise ConfigError(
            f"is readable or writable by other users (mode {mode:o})",
            path=str(path),
            hint=f"it holds MCP sign-in tokens: run `chmod 600 {path}`",
        )


def _load() -> dict[str, Any]:
    return read_json_object(
        store_path(), top_level="the top level must be an object keyed by URL", check=_check_mode
    )


def _update(url: str, change: Callable[[dict[str, Any]], None]) -> None:
    path = store_path()
    ensure_root()
    with locked(path.with_name(path.name + ".lock"), purpose="MCP OAuth write"):
        data = _load()
        entry = data.get(url)
        entry = dict(entry) if isinstance(entry, dict) else {}
        change(entry)
        data[url] = entry
        atomic_write_bytes(path, orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n")
        os.chmod(path, 0o600)


def _remember(tokens: dict[str, Any]) -> None:
    """Mask the tokens xum holds in every command's output."""
    for key in ("access_token", "refresh_token"):
        value = tokens.get(key)
        if isinstance(value, str) and value:
            # Named by a hash: the name is shown in place of the value, so it must not be a
            # piece of it; each token gets its own name, so an old one stays masked too.
            digest = hashlib.sha256(value.encode()).hexdigest()[:8]
            ownsecrets.remember(f"{MASK_NAME}-{digest}", value)


def has_tokens(url: str) -> bool:
    """Whether a sign-in left tokens for `url` (a session then retries it at once)."""
    try:
        entry = _load().get(url)
    except Exception:  # a damaged file: the next sign-in writes it again
        return False
    return isinstance(entry, dict) and isinstance(entry.get("tokens"), dict)


def sign_out(url: str) -> None:
    """Forget the tokens and registration kept for `url`."""
    path = store_path()
    if not path.exists():
        return
    with locked(path.with_name(path.name + ".lock"), purpose="MCP OAuth write"):
        data = _load()
        if data.pop(url, None) is not None:
            atomic_write_bytes(path, orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n")
            os.chmod(path, 0o600)


class FileTokenStorage:
    """The SDK's `TokenStorage` over `$XUM_ROOT/mcp-oauth.json`, for one server URL."""

    def __init__(self, url: str, redirect_uri: str) -> None:
        self.url = url
        self.redirect_uri = redirect_uri

    def _entry(self) -> dict[str, Any]:
        entry = _load().get(self.url)
        return entry if isinstance(entry, dict) else {}

    async def get_tokens(self) -> OAuthToken | None:
        from mcp.shared.auth import OAuthToken

        stored = self._entry().get("tokens")
        if not isinstance(stored, dict):
            return None
        _remember(stored)
        tokens = {k: v for k, v in stored.items() if k != "expires_at"}
        expires_at = stored.get("expires_at")
        if isinstance(expires_at, int | float):
            left = int(expires_at - time.time())
            if left <= EXPIRY_MARGIN_S:
                # The SDK computes expiry only for tokens it received itself: without an
                # access token it refreshes (when it can) before the first request.
                tokens["access_token"] = ""
                tokens["expires_in"] = None
            else:
                tokens["expires_in"] = left
        return OAuthToken.model_validate(tokens)

    async def set_tokens(self, tokens: OAuthToken) -> None:
        data = tokens.model_dump(mode="json", exclude_none=True)
        if tokens.expires_in is not None:
            data["expires_at"] = time.time() + tokens.expires_in
        data.pop("expires_in", None)
        _remember(data)
        await asyncio.to_thread(_update, self.url, lambda entry: entry.__setitem__("tokens", data))

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        from mcp.shared.auth import OAuthClientInformationFull

        stored = self._entry().get("client")
        if not isinstance(stored, dict):
            return None
        info = OAuthClientInformationFull.model_validate(stored)
        uris = [str(u) for u in info.redirect_uris or []]
        if self.redirect_uri not in uris:
            return None  # registered for another xum address: register again
        return info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        data = client_info.model_dump(mode="json", exclude_none=True)
        await asyncio.to_thread(_update, self.url, lambda entry: entry.__setitem__("client", data))


def _provider(
    url: str,
    redirect_uri: str,
    redirect_handler: Callable[[str], Awaitable[None]],
    callback_handler: Callable[[], Awaitable[AuthorizationCodeResult]],
) -> OAuthClientProvider:
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientMetadata
    from pydantic import AnyUrl

    metadata = OAuthClientMetadata(
        client_name="xum",
        redirect_uris=[AnyUrl(redirect_uri)],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    return OAuthClientProvider(
        server_url=url,
        client_metadata=metadata,
        storage=FileTokenStorage(url, redirect_uri),
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )


def session_auth(url: str, on_sign_in_needed: Callable[[], None]) -> OAuthClientProvider:
    """The auth of a session's connection: stored tokens, refreshed; never waits for a person
    (`on_sign_in_needed` is called, then `NeedsSignIn` raised)."""
    _quiet_sdk_log()
    redirect = _stored_redirect(url) or DEFAULT_REDIRECT

    async def redirect_handler(_url: str) -> None:
        on_sign_in_needed()
        raise NeedsSignIn("sign-in needed")

    async def callback_handler() -> AuthorizationCodeResult:
        raise NeedsSignIn("sign-in needed")

    return _provider(url, redirect, redirect_handler, callback_handler)


def _stored_redirect(url: str) -> str | None:
    """The redirect URI of the last registration for `url`, so a session's refresh uses the
    client the sign-in registered."""
    try:
        entry = _load().get(url)
    except Exception:
        return None
    client = entry.get("client") if isinstance(entry, dict) else None
    uris = client.get("redirect_uris") if isinstance(client, dict) else None
    return str(uris[0]) if isinstance(uris, list) and uris else None


# Sign-ins in progress ---------------------------------------------------------------------------


@dataclass(eq=False)
class SignIn:
    """One sign-in: the flow's task, the URL for the browser, the code coming back."""

    server: str
    url: str
    authorization_url: asyncio.Future[str]
    code: asyncio.Future[AuthorizationCodeResult]
    task: asyncio.Task[None] | None = None
    state: str | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)
    error: str | None = None


_pending: dict[str, SignIn] = {}  # by the OAuth `state` the authorization URL carries


async def begin_sign_in(
    server: str,
    url: str,
    headers: dict[str, str],
    redirect_uri: str,
    *,
    connect: Callable[[OAuthClientProvider], Awaitable[None]],
    timeout_s: float = SIGN_IN_TIMEOUT_S,
) -> str | None:
    """Start signing in to `url`: the authorization URL for the browser, or None when no
    sign-in was needed (the stored tokens work). `connect(auth)` opens a connection to the
    server with that auth and closes it (the flow runs inside its first request). Raises
    RuntimeError with a message for the user when the flow fails before the URL."""
    loop = asyncio.get_running_loop()
    sign_in = SignIn(server, url, loop.create_future(), loop.create_future())

    async def redirect_handler(authorization_url: str) -> None:
        state = parse_qs(urlsplit(authorization_url).query).get("state", [""])[0]
        sign_in.state = state
        _pending[state] = sign_in
        if not sign_in.authorization_url.done():
            sign_in.authorization_url.set_result(authorization_url)

    async def callback_handler() -> AuthorizationCodeResult:
        return await asyncio.wait_for(asyncio.shield(sign_in.code), timeout_s)

    auth = _provider(url, redirect_uri, redirect_handler, callback_handler)

    async def run() -> None:
        try:
            await connect(auth)
        except BaseException as exc:
            sign_in.error = _flow_error(exc)
            raise
        finally:
            if sign_in.state is not None:
                _pending.pop(sign_in.state, None)
            sign_in.done.set()

    sign_in.task = asyncio.create_task(run(), name=f"xum mcp sign-in {server}")
    sign_in.task.add_done_callback(lambda t: t.cancelled() or t.exception())
    got_url = asyncio.ensure_future(asyncio.shield(sign_in.authorization_url))
    waited: list[asyncio.Future[Any]] = [got_url, sign_in.task]
    try:
        await asyncio.wait(waited, return_when=asyncio.FIRST_COMPLETED)
    finally:
        got_url.cancel()
    if sign_in.authorization_url.done():
        return sign_in.authorization_url.result()
    if sign_in.error is not None:
        raise RuntimeError(sign_in.error)
    return None  # connected without asking anyone: already signed in


async def complete_sign_in(
    state: str, code: str | None, error: str | None, iss: str | None = None
) -> tuple[str, str | None]:
    """The browser came back: (the server's name, why it failed or None). KeyError for a
    state no sign-in is waiting on."""
    from mcp.shared.auth import AuthorizationCodeResult

    sign_in = _pending.pop(state)
    if error or not code:
        reason = f"the authorization server said: {error or 'no code was returned'}"
        if sign_in.task is not None:
            sign_in.task.cancel()
        return sign_in.server, reason
    sign_in.code.set_result(AuthorizationCodeResult(code=code, state=state, iss=iss))
    try:
        await asyncio.wait_for(sign_in.done.wait(), 60)
    except TimeoutError:
        return sign_in.server, "the server did not answer after the sign-in"
    return sign_in.server, sign_in.error


def _flow_error(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, asyncio.CancelledError | TimeoutError):
        return "the sign-in was not completed in time"
    return str(exc).strip() or type(exc).__name__
