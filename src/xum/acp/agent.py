"""xum as an ACP agent: the methods an editor calls.

`initialize` advertises what the bridge implements and nothing more: `session/load` and
`session/list`, embedded context in prompts; no images or audio, no MCP servers of the editor's,
no authentication methods (xum's providers are configured in xum, so `authenticate` is not
offered). `session/new` makes a workspace of
the project containing the editor's `cwd`, on the runtime `xum acp` was started with (local by
default); `session/load` opens an existing workspace by its id and replays its history first;
`session/prompt` runs a turn and streams it; `session/cancel` stops it; `session/set_mode` and
`session/set_config_option` switch the mode, the model and the thinking level.

Every failure a user can fix answers with a JSON-RPC error whose message says what went wrong
and what to do (no provider configured, a workspace another process holds, an unknown model).
"""

from __future__ import annotations

import asyncio
import logging
import os
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
from xum.acp.delegation import EditorAbilities, EditorDelegations
from xum.acp.hostlink import BridgeListener
from xum.acp.prompt import PromptBlock, prompt_text
from xum.acp.session import BridgeSession, invalid, request_error
from xum.acp.updates import note
from xum.core.errors import XumError
from xum.host.hosts import Hosts
from xum.host.workspace_host import HostOptions
from xum.workspaces.safety.choice import SafetyChoice

if TYPE_CHECKING:
    from acp.interfaces import Client

    from xum.store.registry import WorkspaceRecord

log = logging.getLogger("xum.acp")

LIST_PAGE = 50  # sessions per session/list page


def _directory(cwd: str) -> Path:
    path = Path(cwd)
    if not path.is_absolute():
        raise invalid(f"cwd must be an absolute path, not {cwd!r}")
    if not path.is_dir():
        raise invalid(f"cwd {cwd} is not a directory")
    return path


class XumAgent:
    def __init__(self, runtime: str = "local") -> None:
        self.runtime = runtime  # how new sessions' workspaces are made: local, worktree, ssh <host>
        self.client: Client | None = None
        self.abilities = EditorAbilities()
        self.sessions: dict[str, BridgeSession] = {}
        # One host for every session of the bridge: it opens them, drives their turns (and
        # goals), takes the writer lock per turn and keeps what waits for the user.
        self.listener = BridgeListener()
        self.delegations = EditorDelegations()
        self.hosts = Hosts(
            self.listener,
            options=HostOptions(
                frontend="acp",
                purpose="acp",
                safety=SafetyChoice(),
                people=True,
                goals=True,
                tool_middleware=[self.delegations],
            ),
        )

    def on_connect(self, conn: Client) -> None:
        self.client = conn

    def _client(self) -> Client:
        assert self.client is not None, "the connection calls on_connect first"
        return self.client

    def _session(self, session_id: str) -> BridgeSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise invalid(f"no open session {session_id!r}; create one (session/new) or load it")
        return session

    # Handshake ---------------------------------------------------------------------------

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        from xum import __version__

        self.abilities = EditorAbilities.from_capabilities(client_capabilities)
        log.info(
            "initialize: client %s, protocol %s, editor can: %s",
            client_info.name if client_info else "unknown",
            protocol_version,
            self.abilities,
        )
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

    # Sessions ----------------------------------------------------------------------------

    async def new_session(
        self,
        cwd: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        from xum.context.workspace import agent_ai_defaults
        from xum.engine.route import resolve_route
        from xum.llm.thinking import DEFAULT_THINKING, parse_thinking

        directory = _directory(cwd)
        try:
            # Model and provider first: a missing key fails before anything is made.
            agent_model, agent_thinking = await agent_ai_defaults(str(directory), "exec")
            route = await asyncio.to_thread(resolve_route, agent_model)
            thinking = parse_thinking(
                os.environ.get("XUM_THINKING_LEVEL") or agent_thinking or DEFAULT_THINKING,
                route.provider,
                route.model_id,
            )
            record = await self.hosts.create(
                directory,
                self.runtime,
                name_hint="editor",
                model=route.model_string,
                thinking=thinking,
                agent="exec",
            )
        except XumError as exc:
            raise request_error(exc) from None
        session = self._adopt(record)
        try:
            await session.open()
        except BaseException as exc:
            await self._drop(session)
            if isinstance(exc, XumError):
                raise request_error(exc) from None
            raise
        log.info(
            "new session %s in %s (%s runtime, delegation %s)",
            session.id,
            record.path,
            record.runtime,
            "on" if session.delegating else "off",
        )
        response = NewSessionResponse(
            session_id=session.id,
            modes=opts.mode_state(session.mode),
            config_options=await session.config_options(),
        )
        await self._after_open(session, mcp_servers)
        return response

    def _adopt(self, record: WorkspaceRecord) -> BridgeSession:
        session = BridgeSession(
            self._client(), record, self.abilities, self.hosts, self.delegations
        )
        self.sessions[session.id] = session
        self.listener.register(session)
        return session

    async def _drop(self, session: BridgeSession) -> None:
        """A session that could not open: its workspace's runtime and init hook go."""
        self.sessions.pop(session.id, None)
        self.listener.forget(session.id)
        await session.close()

    async def _after_open(self, session: BridgeSession, mcp_servers: list[Any] | None) -> None:
        """Queued now, sent once the response is out: the session's slash commands, and a word
        on what the editor asked for that xum does not do."""
        if mcp_servers:
            session.push(
                note(
                    "the editor's MCP servers are not used by xum sessions; configure MCP "
                    "servers in xum instead"
                )
            )
        await session.announce_commands()

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse:
        from xum.store import registry

        _directory(cwd)
        session = self.sessions.get(session_id)
        if session is None:
            try:
                record = await asyncio.to_thread(registry.get_workspace, session_id)
            except XumError as exc:
                raise request_error(exc) from None
            if record is None:
                raise invalid(f"no xum workspace with id {session_id!r}")
            if record.archived_at is not None:
                raise invalid(f"workspace {record.name} is archived; unarchive it first")
            session = self._adopt(record)
            try:
                await session.open()
            except XumError as exc:
                await self._drop(session)
                raise request_error(exc) from None
            log.info("loaded session %s (%s)", session.id, record.name)
        await session.replay_history()
        response = LoadSessionResponse(
            modes=opts.mode_state(session.mode),
            config_options=await session.config_options(),
        )
        await self._after_open(session, mcp_servers)
        return response

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        """Workspaces with a session log, the most recently created first; those of `cwd`'s
        project when given. No `updatedAt`: the registry knows when a workspace was made, not
        when its session last changed."""
        from xum.store import registry
        from xum.store import sessions as session_files

        project = None
        if cwd is not None:
            from xum.workspaces.checkouts.shared import project_root

            project = str(await asyncio.to_thread(project_root, _directory(cwd)))
        records = await asyncio.to_thread(registry.list_workspaces, project)
        rows = [r for r in records if r.archived_at is None and session_files.has_log(r.id)]
        rows.sort(key=lambda r: r.created_at, reverse=True)
        start = int(cursor) if cursor and cursor.isdigit() else 0
        page = rows[start : start + LIST_PAGE]
        more = start + LIST_PAGE < len(rows)
        return ListSessionsResponse(
            sessions=[
                SessionInfo(session_id=r.id, cwd=r.path, title=r.title or r.name) for r in page
            ],
            next_cursor=str(start + LIST_PAGE) if more else None,
        )

    # Turns -------------------------------------------------------------------------------

    async def prompt(
        self, session_id: str, prompt: list[PromptBlock], **kwargs: Any
    ) -> PromptResponse:
        session = self._session(session_id)
        try:
            text = prompt_text(prompt)
        except XumError as exc:
            raise request_error(exc) from None
        if not text.strip():
            raise invalid("the prompt is empty")
        stop = await session.prompt(text)
        return PromptResponse(stop_reason=stop)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.cancel()

    # Settings ----------------------------------------------------------------------------

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        session = self._session(session_id)
        await session.set_mode(mode_id)
        # The mode's config option follows the mode.
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
            raise invalid(f"{config_id} takes one of its values")
        try:
            if config_id == opts.MODE_OPTION:
                await session.set_mode(value)
            elif config_id == opts.MODEL_OPTION:
                await session.set_model(value)
            elif config_id == opts.THINKING_OPTION:
                await session.set_thinking(value)
            else:
                raise invalid(
                    f"unknown option {config_id!r}; the options are mode, model, thinking"
                )
        except XumError as exc:
            raise request_error(exc) from None
        return SetSessionConfigOptionResponse(config_options=await session.config_options())

    # Shutdown ----------------------------------------------------------------------------

    async def close_all(self) -> None:
        """The editor went away: every running turn is stopped and ends durably."""
        sessions, self.sessions = list(self.sessions.values()), {}
        await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)
        await self.hosts.shutdown()
