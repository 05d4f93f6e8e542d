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
from typing import TYPE_CHECKING

from acp.schema import ClientCapabilities

from xum.acp.agent_common import LIST_PAGE, AgentBase
from xum.acp.delegation import EditorAbilities, EditorDelegations
from xum.acp.hostlink import BridgeListener
from xum.acp.session import BridgeSession, invalid, request_error
from xum.core.errors import XumError
from xum.host.hosts import Hosts
from xum.host.workspace_host import HostOptions
from xum.workspaces.safety.choice import SafetyChoice

if TYPE_CHECKING:
    from xum.store.registry import WorkspaceRecord

log = logging.getLogger("xum.acp")

__all__ = ["LIST_PAGE", "XumAgent"]


class XumAgent(AgentBase[BridgeSession]):
    def __init__(self, runtime: str = "local") -> None:
        super().__init__(runtime)
        self.abilities = EditorAbilities()
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

    def _initialized(
        self, protocol_version: int, capabilities: ClientCapabilities | None, client: str
    ) -> None:
        self.abilities = EditorAbilities.from_capabilities(capabilities)
        log.info(
            "initialize: client %s, protocol %s, editor can: %s",
            client,
            protocol_version,
            self.abilities,
        )

    # Sessions ----------------------------------------------------------------------------

    async def _create(self, cwd: str) -> BridgeSession:
        from xum.context.workspace import agent_ai_defaults
        from xum.engine.route import resolve_route
        from xum.llm.thinking import DEFAULT_THINKING, parse_thinking

        directory = self._directory(cwd)
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
        return session

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

    async def _load(self, session_id: str) -> BridgeSession:
        from xum.store import registry

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
        return session

    async def _loaded(self, session: BridgeSession) -> None:
        await session.replay_history()

    async def _listed(self, cwd: str | None) -> list[WorkspaceRecord]:
        """Workspaces with a session log, the most recently created first; those of `cwd`'s
        project when given. No `updatedAt`: the registry knows when a workspace was made, not
        when its session last changed."""
        from xum.store import registry
        from xum.store import sessions as session_files

        project = None
        if cwd is not None:
            from xum.workspaces.checkouts.shared import project_root

            project = str(await asyncio.to_thread(project_root, self._directory(cwd)))
        records = await asyncio.to_thread(registry.list_workspaces, project)
        rows = [r for r in records if r.archived_at is None and session_files.has_log(r.id)]
        rows.sort(key=lambda r: r.created_at, reverse=True)
        return rows

    # Shutdown ----------------------------------------------------------------------------

    async def _close_hosts(self) -> None:
        await self.hosts.shutdown()
