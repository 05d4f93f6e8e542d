"""Which `xum server` a front-end attaches to, and with which token.

In order: the `--server-url` flag, else `XUM_SERVER_URL`, else the server running on this
`$XUM_ROOT` (its `server.lock`). The token: `--auth-token`, else `XUM_SERVER_AUTH_TOKEN`, else
the one `server.lock` names for that same server, else the generated token the server keeps in
`$XUM_ROOT/server/auth-token` (read only; never made here). The token is a secret: it is not part
of the target's repr, never logged, and the caller keeps it out of children's environments.

A running server says where it listens, with which token and in which process, in
`server.lock` (mode 0600, so only this user reads it); `find_server` reads it. A lock whose
process is gone (a server killed with SIGKILL leaves it behind) is not a server.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field

import orjson

from xum.core.errors import UsageError, XumError
from xum.core.paths import server_lock_path, server_token_path

URL_ENV = "XUM_SERVER_URL"
TOKEN_ENV = "XUM_SERVER_AUTH_TOKEN"
_MAX_TOKEN = 4096


class NoServerError(XumError):
    code = "server_unreachable"


@dataclass(frozen=True, slots=True)
class RunningServer:
    """The server `server.lock` names: its address, its token and its process."""

    url: str  # e.g. http://127.0.0.1:8765, no trailing slash
    token: str | None = field(repr=False)
    pid: int  # the process whose turns hold a session's writer lock


@dataclass(frozen=True, slots=True)
class ServerTarget:
    url: str  # http(s)://host:port, no trailing slash
    token: str | None = field(default=None, repr=False)

    @property
    def ws_url(self) -> str:
        scheme, rest = self.url.split("://", 1)
        return ("wss://" if scheme == "https" else "ws://") + rest + "/api/ws"

    @property
    def loopback(self) -> bool:
        """Whether the server is on this machine's loopback (no proxy may see its token)."""
        from ipaddress import ip_address
        from urllib.parse import urlsplit

        host = (urlsplit(self.url).hostname or "").lower()
        if host == "localhost":
            return True
        try:
            return ip_address(host).is_loopback
        except ValueError:
            return False


def resolve_server(
    url: str | None = None, token: str | None = None, env: Mapping[str, str] | None = None
) -> ServerTarget:
    """The server to attach to (see the module docstring); raises when there is none."""
    env = os.environ if env is None else env
    wanted = (url or env.get(URL_ENV, "")).strip().rstrip("/")
    given = (token or env.get(TOKEN_ENV, "")).strip() or None
    running = find_server()
    if not wanted:
        if running is None:
            raise NoServerError(
                "no xum server is running on this xum root",
                hint=f"start one with `xum server`, or name one with --server-url or {URL_ENV}",
            )
        return ServerTarget(running.url, given or running.token)
    if not wanted.startswith(("http://", "https://")):
        raise UsageError(
            f"the server URL must start with http:// or https:// (got {wanted[:80]!r})",
            hint="use the address `xum server` printed, e.g. http://127.0.0.1:8765",
        )
    if given is None and running is not None and running.url == wanted:
        given = running.token
    return ServerTarget(wanted, given or _kept_token())


def attach_target(
    url: str | None = None, token: str | None = None, env: Mapping[str, str] | None = None
) -> ServerTarget | None:
    """For a front-end that can run sessions itself too (`xum acp`, `xum tui`): the server to
    attach to when one is named (flag, `XUM_SERVER_URL`) or runs on this root; None to run
    sessions in this process. Raises as `resolve_server` does for a bad URL."""
    env = os.environ if env is None else env
    if not (url or env.get(URL_ENV, "").strip() or find_server() is not None):
        return None
    return resolve_server(url, token, env)


def _kept_token() -> str | None:
    """The token a server on this root generated and keeps, when the file can be trusted."""
    path = server_token_path()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
            return None
        if stat.S_IMODE(info.st_mode) & 0o077:
            return None
        raw = os.read(fd, _MAX_TOKEN)
    except OSError:
        return None
    finally:
        os.close(fd)
    text = raw.decode("ascii", "replace").strip()
    return text or None


def find_server() -> RunningServer | None:
    """The server running on this `$XUM_ROOT`, from its `server.lock`; None when there is none
    (no lock, a damaged one, or one a dead process left)."""
    try:
        data = orjson.loads(server_lock_path().read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(data, dict):
        return None
    url, token, pid = data.get("url"), data.get("token"), data.get("pid")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        return None
    if not isinstance(pid, int) or not _alive(pid):
        return None
    return RunningServer(url.rstrip("/"), token if isinstance(token, str) else None, pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive, though not ours to talk to
    return True
