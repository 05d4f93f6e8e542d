"""`xum acp --server-url`: the ACP bridge as a client of a running `xum server`.

The same methods as the in-process bridge (`xum.acp.agent.XumAgent`), carried out by the
server through `RemoteHosts`: `session/new` makes a workspace on the server (the project of the
editor's `cwd`), `session/load` replays one from the server's history and streams it,
`session/list` lists the server's workspaces. Sessions are `RemoteBridgeSession`s; the server's
events reach them through one WebSocket for the whole bridge.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from acp.schema import ClientCapabilities

from xum.acp.agent_common import LIST_PAGE, AgentBase, editor_directory
from xum.acp.remote_session import RemoteBridgeSession
from xum.acp.session_common import invalid, request_error
from xum.core.errors import XumError
from xum.engine import events as E
from xum.host.remote import RemoteHosts
from xum.host.server_target import ServerTarget

if TYPE_CHECKING:
    from xum.host.pending import PendingQuestion
    from xum.store.registry import WorkspaceRecord

log = logging.getLogger("xum.acp")

__all__ = ["LIST_PAGE", "RemoteXumAgent"]


class _Listener:
    """The server's events to the bridge session of their workspace."""

    def __init__(self) -> None:
        self.sessions: dict[str, RemoteBridgeSession] = {}

    async def opening(self, workspace_id: str) -> None:
        return None

    def event(self, workspace_id: str, event: E.Event) -> None:
        session = self.sessions.get(workspace_id)
        if session is not None:
            session.on_event(event)

    def status_changed(self, workspace_id: str) -> None:
        session = self.sessions.get(workspace_id)
        if session is not None:
            session.on_status()

    def turn_failed(self, workspace_id: str, error: Exception) -> None:
        return None  # the server sends the failure as an `error` event and the turn's end

    def question_opened(self, pending: PendingQuestion) -> None:
        session = self.sessions.get(pending.workspace_id)
        if session is not None:
            session.on_question(pending)

    def question_closed(self, pending: PendingQuestion) -> None:
        return None

    def workspaces_changed(self) -> None:
        return None


class RemoteXumAgent(AgentBase[RemoteBridgeSession]):
    def __init__(self, target: ServerTarget, runtime: str = "local") -> None:
        super().__init__(runtime)
        self.listener = _Listener()
        self.hosts = RemoteHosts(target, self.listener)

    def _initialized(
        self, protocol_version: int, capabilities: ClientCapabilities | None, client: str
    ) -> None:
        log.info("initialize: attached to the xum server at %s", self.hosts.target.url)

    def _directory(self, cwd: str) -> Path:
        # The server may run elsewhere: the editor's directory need not exist here.
        return editor_directory(cwd, must_exist=False)

    async def _open(self, record: WorkspaceRecord, *, replay: bool) -> RemoteBridgeSession:
        session = RemoteBridgeSession(self._client(), record, self.hosts)
        self.sessions[session.id] = session
        self.listener.sessions[session.id] = session
        try:
            await session.open(replay=replay)
        except XumError as exc:
            self.sessions.pop(session.id, None)
            self.listener.sessions.pop(session.id, None)
            raise request_error(exc) from None
        return session

    async def _create(self, cwd: str) -> RemoteBridgeSession:
        directory = self._directory(cwd)
        runtime, _, host = self.runtime.partition(" ")
        try:
            # The server's default model, stored on the workspace as the in-process bridge
            # does (the editor's model picker shows it).
            model = await self.hosts.default_model()
            record = await self.hosts.create(
                str(directory), runtime, agent="exec", host=host or None, model=model
            )
        except XumError as exc:
            raise request_error(exc) from None
        session = await self._open(record, replay=False)
        log.info("new session %s on the server (%s)", session.id, record.name)
        return session

    async def _load(self, session_id: str) -> RemoteBridgeSession:
        try:
            record = await self.hosts.get_record(session_id)
        except XumError as exc:
            raise request_error(exc) from None
        if record.archived_at is not None:
            raise invalid(f"workspace {record.name} is archived; unarchive it first")
        return await self._open(record, replay=True)

    async def _listed(self, cwd: str | None) -> list[WorkspaceRecord]:
        try:
            records = await self.hosts.list_workspaces()
        except XumError as exc:
            raise request_error(exc) from None
        if cwd is not None:
            inside = self._directory(cwd)
            records = [r for r in records if _within(inside, r.project_path, r.path)]
        rows = [r for r in records if r.archived_at is None and r.parent_id is None]
        rows.sort(key=lambda r: r.created_at, reverse=True)
        return rows

    async def _set_mode(self, session: RemoteBridgeSession, mode: str) -> None:
        # The server refuses what it cannot store; the editor is told why.
        try:
            await session.set_mode(mode)
        except XumError as exc:
            raise request_error(exc) from None

    async def _close_hosts(self) -> None:
        await self.hosts.aclose()


def _within(directory: Path, *roots: str) -> bool:
    return any(directory == Path(root) or Path(root) in directory.parents for root in roots)
