"""What the two ACP agents have in common: the protocol surface an editor calls.

`xum.acp.agent.XumAgent` hosts its sessions in this process; `xum.acp.remote_agent.RemoteXumAgent`
has a running `xum server` host them. The handshake, the shape of `session/new` and
`session/load`, the paging of `session/list`, prompts, cancels, the mode and config options and
the shutdown are the same for both and live here; a subclass says how a session is made, found
again and listed, and how its hosts shut down.
"""

from __future__ import annotations

import asyncio
import logging
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

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
from xum.acp.prompt import PromptBlock, prompt_parts
from xum.acp.session_common import SessionBase, invalid, request_error
from xum.acp.updates import note
from xum.core.errors import XumError

if TYPE_CHECKING:
    from acp.interfaces import Client

    from xum.store.registry import WorkspaceRecord

log = logging.getLogger("xum.acp")

LIST_PAGE = 50  # sessions per session/list page

S = TypeVar("S", bound=SessionBase)


def editor_directory(cwd: str, *, must_exist: bool) -> Path:
    """The editor's `cwd`: absolute, and a directory here when the sessions run here."""
    path = Path(cwd)
    if not path.is_absolute():
        raise invalid(f"cwd must be an absolute path, not {cwd!r}")
    if must_exist and not path.is_dir():
        raise invalid(f"cwd {cwd} is not a directory")
    return path


def session_page(rows: Sequence[WorkspaceRecord], cursor: str | None) -> ListSessionsResponse:
    """One page of `session/list` from the rows already filtered and ordered."""
    start = int(cursor) if cursor and cursor.isdigit() else 0
    page = rows[start : start + LIST_PAGE]
    more = start + LIST_PAGE < len(rows)
    return ListSessionsResponse(
        sessions=[SessionInfo(session_id=r.id, cwd=r.path, title=r.title or r.name) for r in page],
        next_cursor=str(start + LIST_PAGE) if more else None,
    )


class AgentBase(ABC, Generic[S]):
    """The ACP methods of a xum bridge over sessions of type `S`."""

    # Whether `image` prompt blocks are taken (and `promptCapabilities.image` advertised).
    takes_images: ClassVar[bool] = True

    def __init__(self, runtime: str) -> None:
        self.runtime = runtime  # how new sessions' workspaces are made: local, worktree, ssh <host>
        self.client: Client | None = None
        self.sessions: dict[str, S] = {}

    # What differs --------------------------------------------------------------------------

    @abstractmethod
    def _initialized(
        self, protocol_version: int, capabilities: ClientCapabilities | None, client: str
    ) -> None:
        """What the agent keeps of the editor's handshake (and logs)."""

    @abstractmethod
    async def _create(self, cwd: str) -> S:
        """`session/new`: a new workspace for the editor's `cwd`, with its session open."""

    @abstractmethod
    async def _load(self, session_id: str) -> S:
        """`session/load` of a session not open in this bridge: open it, history replayed or
        about to be (see `_loaded`)."""

    async def _loaded(self, session: S) -> None:
        """After `session/load` found or opened the session, before it answers."""
        return None

    @abstractmethod
    async def _listed(self, cwd: str | None) -> list[WorkspaceRecord]:
        """The workspaces `session/list` shows, the most recently created first."""

    @abstractmethod
    async def _close_hosts(self) -> None: ...

    # Plumbing ----------------------------------------------------------------------------

    def on_connect(self, conn: Client) -> None:
        self.client = conn

    def _client(self) -> Client:
        assert self.client is not None, "the connection calls on_connect first"
        return self.client

    def _session(self, session_id: str) -> S:
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

        self._initialized(
            protocol_version, client_capabilities, client_info.name if client_info else "unknown"
        )
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(
                    image=self.takes_images, audio=False, embedded_context=True
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
        session = await self._create(cwd)
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
        self._directory(cwd)
        session = self.sessions.get(session_id)
        if session is None:
            session = await self._load(session_id)
        await self._loaded(session)
        response = LoadSessionResponse(
            modes=opts.mode_state(session.mode),
            config_options=await session.config_options(),
        )
        await self._after_open(session, mcp_servers)
        return response

    def _directory(self, cwd: str) -> Path:
        return editor_directory(cwd, must_exist=True)

    async def _after_open(self, session: S, mcp_servers: list[Any] | None) -> None:
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

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        return session_page(await self._listed(cwd), cursor)

    # Turns -------------------------------------------------------------------------------

    async def prompt(
        self, session_id: str, prompt: list[PromptBlock], **kwargs: Any
    ) -> PromptResponse:
        session = self._session(session_id)
        try:
            text, images = prompt_parts(prompt, images=self.takes_images)
        except XumError as exc:
            raise request_error(exc) from None
        if not text.strip() and not images:
            raise invalid("the prompt is empty")
        stop = await session.prompt(text, images)
        return PromptResponse(stop_reason=stop)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.cancel()

    # Settings ----------------------------------------------------------------------------

    async def _set_mode(self, session: S, mode: str) -> None:
        await session.set_mode(mode)

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        session = self._session(session_id)
        await self._set_mode(session, mode_id)
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
        await self._close_hosts()
