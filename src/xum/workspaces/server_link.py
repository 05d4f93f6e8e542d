"""Reaching the `xum server` that runs on this `$XUM_ROOT`, from another front-end.

A running server says where it listens, and with which token, in `server.lock` (mode 0600, so
only this user reads it). A front-end that finds a workspace's session busy because the server
is running a turn in it can still steer that turn: queue a message (after the current step, or
after the turn) or interrupt it, through the server's own API, exactly as the browser does.

The calls go to the address the lock names (the server binds it; loopback by default) with the
standard library's HTTP client on a worker thread: they are rare, small and local, so they are
not worth an HTTP library on the terminal UI's start-up path. A lock whose process is gone (a
server killed with SIGKILL leaves it behind) is not a server.
"""

from __future__ import annotations

import asyncio
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote

import orjson

from xum.core.errors import XumError
from xum.core.paths import server_lock_path

TIMEOUT_S = 10.0


class ServerLinkError(XumError):
    code = "server_unreachable"


@dataclass(frozen=True, slots=True)
class ServerLink:
    url: str  # e.g. http://127.0.0.1:8765, no trailing slash
    token: str | None
    pid: int  # the server's process (the one whose turns hold a session's writer lock)

    async def send(self, workspace_id: str, text: str, when: Literal["step", "turn"]) -> str:
        """Queue `text` in the workspace's session on the server; its disposition (`started`,
        `queued`)."""
        body = await self._call(
            "POST", f"/api/workspaces/{quote(workspace_id)}/messages", {"text": text, "when": when}
        )
        return str(body.get("disposition", "queued"))

    async def interrupt(self, workspace_id: str) -> list[str]:
        """Stop the server's running turn in the workspace; the messages it had queued."""
        body = await self._call("POST", f"/api/workspaces/{quote(workspace_id)}/interrupt", None)
        unsent = body.get("unsent")
        return [str(u) for u in unsent] if isinstance(unsent, list) else []

    async def approvals(self, workspace_id: str) -> list[dict[str, Any]]:
        """The `approval-request` events waiting in the workspace (docs/events.md)."""
        body = await self._call("GET", f"/api/workspaces/{quote(workspace_id)}/approvals", None)
        waiting = body.get("approvals")
        return [a for a in waiting if isinstance(a, dict)] if isinstance(waiting, list) else []

    async def approve(
        self, workspace_id: str, request_id: str, decision: str, reason: str | None
    ) -> None:
        path = f"/api/workspaces/{quote(workspace_id)}/approvals/{quote(request_id)}"
        await self._call("POST", path, {"decision": decision, "reason": reason})

    async def question(self, workspace_id: str) -> dict[str, Any] | None:
        """The `ask_user_question` waiting in the workspace, as the WebSocket's `question`."""
        body = await self._call("GET", f"/api/workspaces/{quote(workspace_id)}/question", None)
        waiting = body.get("question")
        return waiting if isinstance(waiting, dict) else None

    async def answer(
        self, workspace_id: str, question_id: str, answers: dict[str, str] | None
    ) -> None:
        path = f"/api/workspaces/{quote(workspace_id)}/answers"
        await self._call("POST", path, {"questionId": question_id, "answers": answers})

    async def _call(self, method: str, path: str, payload: Any) -> dict[str, Any]:
        return await asyncio.to_thread(self._call_sync, method, path, payload)

    def _call_sync(self, method: str, path: str, payload: Any) -> dict[str, Any]:
        headers = {"Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        data = None
        if payload is not None:
            data = orjson.dumps(payload)
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            raise _api_error(exc) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise ServerLinkError(
                f"the xum server at {self.url} did not answer ({reason})",
                hint="check that it is still running (`xum server`), then try again",
            ) from None
        try:
            body = orjson.loads(raw) if raw else {}
        except orjson.JSONDecodeError:
            body = {}
        return body if isinstance(body, dict) else {}


def _api_error(exc: urllib.error.HTTPError) -> XumError:
    """The server's own error (its message and hint), or the status when it sent none."""
    try:
        body = orjson.loads(exc.read() or b"{}")
    except (orjson.JSONDecodeError, OSError):
        body = {}
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        hint = error.get("hint")
        return XumError(f"the xum server refused: {error['message']}", hint=hint or None)
    return ServerLinkError(
        f"the xum server answered HTTP {exc.code}",
        hint="its log (the terminal it runs in) says why",
    )


def find_server() -> ServerLink | None:
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
    return ServerLink(url.rstrip("/"), token if isinstance(token, str) else None, pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive, though not ours to talk to
    return True
