"""`RemoteHosts`: the workspace host of a running `xum server`, reached over its API.

A front-end that attaches to a server (`xum acp --server-url`, `xum tui --server-url`) uses this instead of an
in-process `Hosts`: the same calls (create, fork, send, interrupt, clear the queue, Start Here,
change settings, answer questions and approvals) go to the server's REST routes, and the same
`HostListener` gets the same typed engine events, read from the server's WebSocket
(docs/api.md). So the server's turns show token by token, and what an editor sends shows in the
browser live, and the other way round.

The WebSocket reconnects by itself when it drops and resumes every subscription after the last
`seq` it received: the committed events after it, then the reply streaming now (as a
`discard-partial` followed by the deltas so far), the running calls' output so far, then live
events (the server's resume semantics). Calls that need an answer from the server are awaitable
here (`answer_question`, `answer_approval`), where the in-process host's are plain calls.

httpx and websockets are imported when a client is made, never on the start-up path of a
front-end that does not attach. The token goes only into the `Authorization` header.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import quote

import orjson

from xum.core.images import ImageUpload
from xum.engine import events as E
from xum.host.listener import HostListener, NullListener
from xum.host.pending import PendingQuestion
from xum.host.remote_http import TIMEOUT_S, RemoteError, ServerApi
from xum.host.remote_inbox import MESSAGES as INBOX_MESSAGES
from xum.host.remote_inbox import RemoteInbox
from xum.host.remote_wire import (
    event_from_json,
    notice_from_json,
    partial_events,
    question_from_json,
    record_from_json,
)
from xum.host.server_target import ServerTarget
from xum.store.registry import WorkspaceRecord

if TYPE_CHECKING:
    from xum.host.notifications import Notice
    from xum.workspaces.devcontainer_configs import DevcontainerConfig

log = logging.getLogger("xum.host.remote")
# websockets logs the handshake's headers at debug level, the Authorization header included: the
# socket gets a logger of its own that never logs below INFO, so the token stays out of any log.
_socket_log = logging.getLogger("xum.host.remote.socket")
_socket_log.setLevel(logging.INFO)

Disposition = Literal["started", "queued", "command"]


@dataclass(frozen=True)
class SentMessage:
    """The server's answer to a message (docs/api.md, `POST .../messages`)."""

    disposition: Disposition
    when: str | None
    command: str | None
    record: WorkspaceRecord | None
    idle_hours: float | None
    fork_message_error: dict[str, Any] | None


class RemoteHosts:
    def __init__(
        self,
        target: ServerTarget,
        listener: HostListener | None = None,
        *,
        reconnect_delay_s: float = 0.2,
    ) -> None:
        self.target = target
        self.listener: HostListener = listener or NullListener()
        self.reconnect_delay_s = reconnect_delay_s
        self.api = ServerApi(target)
        self._after: dict[str, int] = {}  # subscribed workspace -> the last seq it received
        self._subscribed: dict[str, asyncio.Event] = {}
        self._statuses: dict[str, dict[str, Any]] = {}
        self._questions: dict[str, PendingQuestion] = {}
        self._approvals: dict[str, dict[str, E.ApprovalRequest]] = {}
        self._socket: Any = None  # the open websockets connection, once its hello came
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self.connections = 0  # how many times the socket (re)connected, for diagnostics
        self.on_notice: Callable[[Notice], None] | None = None  # shows the server's notifications
        self.inbox = RemoteInbox(self._call)  # followed once `inbox.following` is set

    # Lifecycle ---------------------------------------------------------------------------

    async def __aenter__(self) -> RemoteHosts:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        self._closed = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
            self._task = None
        await self.api.aclose()

    # REST --------------------------------------------------------------------------------

    async def _call(
        self,
        method: str,
        path: str,
        body: object = None,
        params: Mapping[str, str] | None = None,
        content: bytes | None = None,
    ) -> dict[str, Any]:
        return await self.api.call(method, path, body, params, content)

    def _record(self, data: dict[str, Any]) -> WorkspaceRecord:
        status = data.get("status")
        if isinstance(status, dict):
            self._statuses[str(data["id"])] = status
        return record_from_json(data)

    async def server_info(self, what: str = "info") -> dict[str, Any]:
        return await self._call("GET", f"/api/server/{what}")  # or "container-engine"

    async def external_agents(self) -> list[tuple[str, str]]:
        """(name, label) of each external ACP agent the server's config.json defines."""
        found = (await self._call("GET", "/api/external-agents")).get("agents")
        return [
            (str(a["name"]), str(a.get("label") or a["name"]))
            for a in (found if isinstance(found, list) else [])
            if isinstance(a, dict) and isinstance(a.get("name"), str)
        ]

    async def default_model(self) -> str | None:
        """The model the server gives a workspace that names none (`provider:id`)."""
        found = (await self._call("GET", "/api/settings/models")).get("defaultModel")
        return found if isinstance(found, str) and found else None

    async def add_project(self, directory: str) -> str:
        """Register a project on the server; its path as the server keeps it."""
        return str((await self._call("POST", "/api/projects", {"path": directory}))["path"])

    async def list_workspaces(self, project: str | None = None) -> list[WorkspaceRecord]:
        params = {"project": project} if project else None
        data = await self._call("GET", "/api/workspaces", params=params)
        return [self._record(w) for w in data.get("workspaces", []) if isinstance(w, dict)]

    async def get_record(self, workspace_id: str) -> WorkspaceRecord:
        return self._record(await self._call("GET", _ws(workspace_id)))

    async def create(self, directory: str, runtime: str, **fields: Any) -> WorkspaceRecord:
        """A new workspace of the project at `directory` (registered first when it is not);
        `fields`: name, title, model, thinking, agent, host (the SSH host or the container image),
        external_agent."""
        project = await self.add_project(directory)
        share = fields.pop("share_credentials", False)  # Docker's "Share credentials"
        kind: dict[str, Any] = {"type": runtime, "shareCredentials": share}
        if fields.get("host"):
            target = {"docker": "image", "devcontainer": "config"}.get(runtime, "host")
            kind[target] = fields.pop("host")
        body = {"projectPath": project, "runtime": kind}
        external = fields.pop("external_agent", None)  # the API's name for it
        if external is not None:
            body["externalAgent"] = external
        body.update({k: v for k, v in fields.items() if v is not None})
        return self._record(await self._call("POST", "/api/workspaces", body))

    async def devcontainer_configs(self, directory: str) -> list[DevcontainerConfig]:
        """The devcontainer.json files of the project at `directory` (registered first when it
        is not, as `create` does), as the server finds them."""
        from xum.workspaces.devcontainer_configs import DevcontainerConfig

        project = await self.add_project(directory)
        data = await self._call("GET", "/api/projects/devcontainers", params={"path": project})
        found = data.get("configs") if isinstance(data, dict) else None
        return [
            DevcontainerConfig(c.get("name") or None, str(c.get("path") or ""))
            for c in (found if isinstance(found, list) else [])
            if isinstance(c, dict)
        ]

    async def create_scratch(self, **fields: Any) -> WorkspaceRecord:
        """A scratch chat (`POST /api/chats`); `fields`: title, model, thinking, agent."""
        body = {k: v for k, v in fields.items() if v is not None}
        return self._record(await self._call("POST", "/api/chats", body))

    async def fork(self, workspace_id: str, name: str | None, title: str | None) -> WorkspaceRecord:
        body = {k: v for k, v in (("name", name), ("title", title)) if v is not None}
        return self._record(await self._call("POST", _ws(workspace_id, "fork"), body))

    async def send_message(
        self,
        workspace: WorkspaceRecord | str,
        text: str,
        when: Literal["step", "turn"] = "step",
        images: Sequence[ImageUpload] = (),
    ) -> SentMessage:
        ws = workspace if isinstance(workspace, str) else workspace.id
        body: dict[str, Any] = {"text": text, "when": when}
        if images:  # uploaded first (raw bytes), then named by hash (docs/images.md)
            refs = []
            for image in images:
                params = {"name": image.name} if image.name else None
                stored = await self._call(
                    "POST", _ws(ws, "images"), params=params, content=image.data
                )
                refs.append({"sha256": stored.get("sha256"), "name": image.name})
            body["images"] = refs
        data = await self._call("POST", _ws(ws, "messages"), body)
        record = data.get("workspace")
        idle = data.get("idleHours")
        fork_error = data.get("forkMessageError")
        return SentMessage(
            disposition=data.get("disposition", "queued"),
            when=data.get("when"),
            command=data.get("command"),
            record=self._record(record) if isinstance(record, dict) else None,
            idle_hours=float(idle) if isinstance(idle, int | float) else None,
            fork_message_error=fork_error if isinstance(fork_error, dict) else None,
        )

    async def send(
        self,
        workspace: WorkspaceRecord | str,
        text: str,
        when: Literal["step", "turn"] = "step",
        images: Sequence[ImageUpload] = (),
    ) -> Disposition:
        """`started`, `queued`, or `command` (a workspace command the server carried out)."""
        return (await self.send_message(workspace, text, when, images)).disposition

    async def interrupt(self, workspace_id: str) -> tuple[bool, list[str]]:
        data = await self._call("POST", _ws(workspace_id, "interrupt"))
        return bool(data.get("interrupted")), [str(t) for t in data.get("unsent") or []]

    async def clear_queue(self, workspace_id: str) -> list[str]:
        data = await self._call("DELETE", _ws(workspace_id, "queue"))
        return [str(t) for t in data.get("unsent") or []]

    async def mark_read(self, workspace_id: str, seq: int) -> None:
        """The workspace was read up to `seq` (as the browser marks it): its notices leave."""
        await self._call("POST", _ws(workspace_id, "read"), {"seq": seq})

    async def start_here(self, workspace: WorkspaceRecord | str, seq: int) -> int:
        ws = workspace if isinstance(workspace, str) else workspace.id
        return int((await self._call("POST", _ws(ws, "start-here"), {"seq": seq}))["seq"])

    async def change_settings(self, workspace_id: str, **changes: Any) -> WorkspaceRecord:
        """model, thinking, agent, title, permissions: from the next turn, as the host does."""
        body = {k: v for k, v in changes.items() if v is not None}
        return self._record(await self._call("PATCH", _ws(workspace_id), body))

    async def answer_question(
        self, workspace_id: str, question_id: str, answers: Mapping[str, str] | None
    ) -> bool:
        """Settle the waiting question (None dismisses it); False when it no longer waits."""
        body = {"questionId": question_id, "answers": dict(answers) if answers else None}
        try:
            await self._call("POST", _ws(workspace_id, "answers"), body)
        except RemoteError as exc:
            if exc.status == 404:
                return False
            raise
        return True

    async def answer_approval(
        self, workspace_id: str, request_id: str, decision: str, reason: str | None = None
    ) -> bool:
        """Decide a waiting approval (`once`, `always`, `deny`); False when it no longer waits."""
        body: dict[str, Any] = {"decision": decision}
        if reason:
            body["reason"] = reason
        try:
            await self._call("POST", _ws(workspace_id, f"approvals/{quote(request_id)}"), body)
        except RemoteError as exc:
            if exc.status == 404:
                return False
            raise
        return True

    async def rename(self, workspace_id: str, name: str) -> WorkspaceRecord:
        return self._record(await self._call("POST", _ws(workspace_id, "rename"), {"name": name}))

    async def archive(self, workspace_id: str) -> WorkspaceRecord:
        """Archive (the server interrupts a running turn first and keeps the checkout)."""
        return self._record(await self._call("POST", _ws(workspace_id, "archive")))

    async def unarchive(self, workspace_id: str) -> WorkspaceRecord:
        return self._record(await self._call("POST", _ws(workspace_id, "unarchive")))

    async def archived(self, project: str) -> list[WorkspaceRecord]:
        params = {"project": project, "archived": "only"}
        data = await self._call("GET", "/api/workspaces", params=params)
        return [self._record(w) for w in data.get("workspaces", []) if isinstance(w, dict)]

    async def deletion_preview(self, workspace_id: str) -> dict[str, Any]:
        """What deleting would remove and keep (`removes`, `keeps`, `warnings`, `dirtyFiles`)."""
        return await self._call("GET", _ws(workspace_id, "deletion"))

    async def delete(self, workspace_id: str, *, force: bool = False) -> list[str]:
        """Delete the workspace; the server's notes on what went otherwise than planned."""
        params = {"force": "true"} if force else None
        data = await self._call("DELETE", _ws(workspace_id), params=params)
        return [str(n) for n in data.get("notes") or []]

    async def git_review(self, workspace_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """The checkout's git status and its diff against its base, as the server reads them
        (where the checkout is: the server's machine, or the SSH host)."""
        status = await self._call("GET", _ws(workspace_id, "git/status"))
        if not status.get("isGit"):
            return status, {}
        return status, await self._call("GET", _ws(workspace_id, "git/diff"))

    async def agents(self, workspace_id: str) -> list[dict[str, Any]]:
        """What the agent picker offers in the workspace: id, name, description."""
        data = await self._call("GET", _ws(workspace_id, "agents"))
        return [a for a in data.get("agents") or [] if isinstance(a, dict)]

    async def slash_commands(self, workspace_id: str) -> list[dict[str, Any]]:
        """What `/` offers in the workspace (`GET .../slash`): name, description, usage, kind."""
        data = await self._call("GET", _ws(workspace_id, "slash"))
        return [c for c in data.get("commands") or [] if isinstance(c, dict)]

    async def history(self, workspace_id: str, after_seq: int = 0) -> list[E.Event]:
        """The committed events after `after_seq`, every page."""
        out: list[E.Event] = []
        while True:
            params = {"afterSeq": str(after_seq), "limit": "500"}
            data = await self._call("GET", _ws(workspace_id, "history"), params=params)
            for raw in data.get("events") or []:
                event = event_from_json(raw)
                if event is not None:
                    out.append(event)
            last = data.get("lastSeq")
            if not data.get("hasMore") or not isinstance(last, int):
                return out
            after_seq = last

    # What the stream says ----------------------------------------------------------------

    def status(self, workspace_id: str) -> dict[str, Any] | None:
        """The workspace's latest `WorkspaceStatus` (docs/api.md); None before any came."""
        return self._statuses.get(workspace_id)

    def is_running(self, workspace_id: str) -> bool:
        status = self._statuses.get(workspace_id) or {}
        return status.get("state") in ("streaming", "waiting")

    def queued(self, workspace_id: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The waiting messages' previews (the server sends the first 500 characters)."""
        queued = (self._statuses.get(workspace_id) or {}).get("queued") or {}
        messages = [m for m in queued.get("messages") or [] if isinstance(m, dict)]
        step = tuple(str(m.get("text", "")) for m in messages if m.get("when") == "step")
        turn = tuple(str(m.get("text", "")) for m in messages if m.get("when") == "turn")
        return step, turn

    def pending_question(self, workspace_id: str) -> PendingQuestion | None:
        return self._questions.get(workspace_id)

    def approval_requests(self, workspace_id: str) -> list[E.ApprovalRequest]:
        return list(self._approvals.get(workspace_id, {}).values())

    def last_seq(self, workspace_id: str) -> int:
        return self._after.get(workspace_id, 0)

    # The event stream --------------------------------------------------------------------

    def connect(self) -> None:
        """Open the WebSocket now (before any subscription): every workspace's status comes
        from then on, a snapshot first (the sidebar's dots), and `workspaces-changed`."""
        if self._task is None and not self._closed:
            self._task = asyncio.create_task(self._run(), name="xum remote host socket")

    async def subscribe(
        self, workspace_id: str, after_seq: int = 0, *, timeout_s: float = TIMEOUT_S
    ) -> None:
        """Stream the workspace to the listener: committed events after `after_seq`, what is
        streaming now, then live events; returns once the server confirmed the subscription.
        Kept across reconnects (resumed after the last seq received)."""
        self._after[workspace_id] = after_seq
        done = self._subscribed[workspace_id] = asyncio.Event()
        if self._task is None:
            self.connect()
        elif self._socket is not None:
            await self._send_subscribe(workspace_id)
        try:
            async with asyncio.timeout(timeout_s):
                await done.wait()
        except TimeoutError:
            raise RemoteError(
                f"the xum server at {self.target.url} did not stream workspace {workspace_id}",
                code="server_unreachable",
                hint="check that the server runs and the token is right (--auth-token)",
            ) from None

    async def unsubscribe(self, workspace_id: str) -> None:
        self._after.pop(workspace_id, None)
        self._subscribed.pop(workspace_id, None)
        if self._socket is not None:
            msg = {"type": "unsubscribe", "workspaceId": workspace_id}
            with contextlib.suppress(Exception):
                await self._socket.send(orjson.dumps(msg).decode())

    async def reconnect(self) -> None:
        """Drop the socket now (as a network failure would): it reconnects and resumes."""
        socket = self._socket
        if socket is not None:
            with contextlib.suppress(Exception):
                await socket.close()

    async def _send_subscribe(self, workspace_id: str) -> None:
        after = self._after.get(workspace_id)
        if after is None or self._socket is None:
            return
        msg = {"type": "subscribe", "workspaceId": workspace_id, "afterSeq": after}
        with contextlib.suppress(Exception):  # a dropped socket: the reconnect resubscribes
            await self._socket.send(orjson.dumps(msg).decode())

    async def _run(self) -> None:
        import websockets

        headers = {"Authorization": f"Bearer {self.target.token}"} if self.target.token else {}
        delay = self.reconnect_delay_s
        while not self._closed:
            try:
                async with websockets.connect(
                    self.target.ws_url,
                    additional_headers=headers,
                    max_size=None,
                    logger=_socket_log,
                ) as socket:
                    self.connections += 1
                    delay = self.reconnect_delay_s
                    async for raw in socket:
                        await self._handle(socket, raw)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # refused, dropped, a bad handshake: retry
                log.debug("server socket ended: %s", type(exc).__name__)
            self._socket = None
            if self._closed:
                return
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)

    async def _handle(self, socket: Any, raw: str | bytes) -> None:
        try:
            msg = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return
        if not isinstance(msg, dict):
            return
        kind = msg.get("type")
        ws = msg.get("workspaceId")
        if kind == "hello":
            self._socket = socket
            if self.on_notice is not None:  # a failed send ends the socket: it reconnects
                await socket.send(orjson.dumps({"type": "notifications-subscribe"}).decode())
            if self.inbox.following:
                await socket.send(orjson.dumps({"type": "inbox-subscribe"}).decode())
            for workspace_id in list(self._after):
                await self._send_subscribe(workspace_id)
        elif kind in INBOX_MESSAGES:
            _guard(self.inbox.take, msg)
        elif not isinstance(ws, str):
            if kind == "workspaces-changed":
                _guard(self.listener.workspaces_changed)
            elif kind == "notification" and self.on_notice is not None:
                if (notice := notice_from_json(msg.get("notification"))) is not None:
                    _guard(self.on_notice, notice)
            elif kind == "error":
                log.debug("the server refused a message: %s", msg.get("error"))
        elif kind == "workspace-status" and isinstance(msg.get("status"), dict):
            self._statuses[ws] = msg["status"]
            _guard(self.listener.status_changed, ws)
        elif ws not in self._after:
            return  # a workspace unsubscribed meanwhile
        elif kind == "event":
            self._event(ws, event_from_json(msg.get("event")))
        elif kind == "partial":
            for event in partial_events(msg):
                _guard(self.listener.event, ws, event)
        elif kind == "question":
            self._question(ws, msg)
        elif kind == "question-closed":
            pending = self._questions.get(ws)
            if pending is not None and pending.id == msg.get("questionId"):
                self._close_question(ws)
        elif kind == "subscribed":
            last = msg.get("lastSeq")
            if isinstance(last, int):
                self._after[ws] = max(self._after.get(ws, 0), last)
            if isinstance(msg.get("status"), dict):
                self._statuses[ws] = msg["status"]
            done = self._subscribed.get(ws)
            if done is not None:
                done.set()
        elif kind == "resync":
            reason = msg.get("reason")
            if reason == "deleted":
                self._after.pop(ws, None)
                return
            if reason == "log-reloaded":
                self._after[ws] = 0
            await self._send_subscribe(ws)

    def _event(self, ws: str, event: E.Event | None) -> None:
        if event is None:
            return
        if isinstance(event, E.Committed) and isinstance(event.seq, int):
            if event.seq <= self._after.get(ws, 0):
                return  # already delivered before a reconnect
            self._after[ws] = event.seq
        if isinstance(event, E.ApprovalRequest):
            self._approvals.setdefault(ws, {})[event.request_id] = event
        elif isinstance(event, E.ApprovalResolved):
            self._approvals.get(ws, {}).pop(event.request_id, None)
        elif isinstance(event, E.TurnEnd):
            self._approvals.pop(ws, None)
            if ws in self._questions:
                self._close_question(ws)
        _guard(self.listener.event, ws, event)

    def _question(self, ws: str, msg: dict[str, Any]) -> None:
        known = self._questions.get(ws)
        if known is not None and known.id == msg.get("questionId"):
            return  # sent again on a resubscribe
        if known is not None:
            self._close_question(ws)
        pending = question_from_json(msg)
        self._questions[ws] = pending
        _guard(self.listener.question_opened, pending)

    def _close_question(self, ws: str) -> None:
        pending = self._questions.pop(ws)
        pending.settled = True
        _guard(self.listener.question_closed, pending)


def _ws(workspace_id: str, tail: str = "") -> str:
    path = f"/api/workspaces/{quote(workspace_id, safe='')}"
    return f"{path}/{tail}" if tail else path


def _guard(fn: Any, *args: Any) -> None:
    """A listener must not raise (listener.py); one that does is logged, the stream goes on."""
    try:
        fn(*args)
    except Exception:
        log.exception("a front-end failed to take a server event")
