"""`xum acp --server-url`: the ACP bridge as a client of a running `xum server`.

The same methods as the in-process bridge (`xum.acp.agent.XumAgent`), carried out by the
server through `RemoteHosts`: `session/new` makes a workspace on the server (the project of the
editor's `cwd`), `session/load` replays one from the server's history and streams it,
`session/list` lists the server's workspaces. Sessions are `RemoteBridgeSession`s; the server's
events reach them through one WebSocket for the whole bridge.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import PROTOCOL_VERSION
from acp.schema import (
    AgentCapabilities,
    ClientCapabilities,
    ConfigOptionUpdate,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)

from xum.acp import options as opts
from xum.acp.prompt import PromptBlock, prompt_text
from xum.acp.remote_session import RemoteBridgeSession, _invalid, _request_error
from xum.acp.updates import note
from xum.core.errors import XumError
from xum.engine import events as E
from xum.host.remote import RemoteHosts
from xum.host.server_target import ServerTarget

if TYPE_CHECKING:
    from acp.interfaces import Client

    from xum.host.pending import PendingQuestion
    from xum.store.registry import WorkspaceRecord

log = logging.getLogger("xum.acp")

LIST_PAGE = 50


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


def _directory(cwd: str) -> Path:
    path = Path(cwd)
    if not path.is_absolute():
        raise _invalid(f"cwd must be an absolute path, not {cwd!r}")
    return path


class RemoteXumAgent:
    def __init__(self, target: ServerTarget, runtime: str = "local") -> None:
        self.runtime = runtime
        self.client: Client | None = None
        self.listener = _Listener()
        self.hosts = RemoteHosts(target, self.listener)
        self.sessions: dict[str, RemoteBridgeSession] = {}

    def on_connect(self, conn: Client) -> None:
        self.client = conn

    def _client(self) -> Client:
        assert self.client is not None, "the connection calls on_connect first"
        return self.client

    def _session(self, session_id: str) -> RemoteBridgeSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise _invalid(f"no open session {session_id!r}; create one (session/new) or load it")
        return session

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        from xum import __version__

        log.info("initialize: attached to the xum server at %s", self.hosts.target.url)
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(
                    image=False, audio=False, embedded_context=True
                ),
                mcp_capabilities=McpCapabilities(http=False, sse=False),
                session_capabilities=SessionCapabilities(list=SessionListCapabilities()),
            ),
            agent_info=Implementation(name="xum", title="xum", version=__version__),
            auth_methods=[],
        )

    async def _open(self, record: WorkspaceRecord, *, replay: bool) -> RemoteBridgeSession:
        session = RemoteBridgeSession(self._client(), record, self.hosts)
        self.sessions[session.id] = session
        self.listener.sessions[session.id] = session
        try:
            await session.open(replay=replay)
        except XumError as exc:
            self.sessions.pop(session.id, None)
            self.listener.sessions.pop(session.id, None)
            raise _request_error(exc) from None
        return session

    async def _after_open(
        self, session: RemoteBridgeSession, mcp_servers: list[Any] | None
    ) -> None:
        if mcp_servers:
            session.push(
                note(
                    "the editor's MCP servers are not used by xum sessions; configure MCP "
                    "servers in xum instead"
                )
            )
        await session.announce_commands()

    async def new_session(
        self,
        cwd: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        directory = _directory(cwd)
        runtime, _, host = self.runtime.partition(" ")
        try:
            # The server's default model, stored on the workspace as the in-process bridge
            # does (the editor's model picker shows it).
            model = await self.hosts.default_model()
            record = await self.hosts.create(
                str(directory), runtime, agent="exec", host=host or None, model=model
            )
        except XumError as exc:
            raise _request_error(exc) from None
        session = await self._open(record, replay=False)
        log.info("new session %s on the server (%s)", session.id, record.name)
        response = NewSessionResponse(
            session_id=session.id,
            modes=opts.mode_state(session.mode),
            config_options=await session.config_options(),
        )
        await self._after_open(session, mcp_servers)
        return response

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse:
        _directory(cwd)
        session = self.sessions.get(session_id)
        if session is None:
            try:
                record = await self.hosts.get_record(session_id)
            except XumError as exc:
                raise _request_error(exc) from None
            if record.archived_at is not None:
                raise _invalid(f"workspace {record.name} is archived; unarchive it first")
            session = await self._open(record, replay=True)
        response = LoadSessionResponse(
            modes=opts.mode_state(session.mode),
            config_options=await session.config_options(),
        )
        await self._after_open(session, mcp_servers)
        return response

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        try:
            records = await self.hosts.list_workspaces()
        except XumError as exc:
            raise _request_error(exc) from None
        if cwd is not None:
            inside = _directory(cwd)
            records = [r for r in records if _within(inside, r.project_path, r.path)]
        rows = [r for r in records if r.archived_at is None and r.parent_id is None]
        rows.sort(key=lambda r: r.created_at, reverse=True)
        start = int(cursor) if cursor and cursor.isdigit() else 0
        page = rows[start : start + LIST_PAGE]
        return ListSessionsResponse(
            sessions=[
                SessionInfo(session_id=r.id, cwd=r.path, title=r.title or r.name) for r in page
            ],
            next_cursor=str(start + LIST_PAGE) if start + LIST_PAGE < len(rows) else None,
        )

    async def prompt(
        self, session_id: str, prompt: list[PromptBlock], **kwargs: Any
    ) -> PromptResponse:
        session = self._session(session_id)
        try:
            text = prompt_text(prompt)
        except XumError as exc:
            raise _request_error(exc) from None
        if not text.strip():
            raise _invalid("the prompt is empty")
        stop = await session.prompt(text)
        return PromptResponse(stop_reason=stop)  # type: ignore[arg-type]

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.cancel()

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        session = self._session(session_id)
        try:
            await session.set_mode(mode_id)
        except XumError as exc:
            raise _request_error(exc) from None
        session.push(
            ConfigOptionUpdate(
                session_update="config_option_update",
                config_options=await session.config_options(),
            )
        )
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        session = self._session(session_id)
        if not isinstance(value, str):
            raise _invalid(f"{config_id} takes one of its values")
        try:
            if config_id == opts.MODE_OPTION:
                await session.set_mode(value)
            elif config_id == opts.MODEL_OPTION:
                await session.set_model(value)
            elif config_id == opts.THINKING_OPTION:
                await session.set_thinking(value)
            else:
                raise _invalid(
                    f"unknown option {config_id!r}; the options are mode, model, thinking"
                )
        except XumError as exc:
            raise _request_error(exc) from None
        return SetSessionConfigOptionResponse(config_options=await session.config_options())

    async def close_all(self) -> None:
        sessions, self.sessions = list(self.sessions.values()), {}
        await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)
        await self.hosts.aclose()


def _within(directory: Path, *roots: str) -> bool:
    return any(directory == Path(root) or Path(root) in directory.parents for root in roots)
