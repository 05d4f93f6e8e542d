"""One ACP session: a xum workspace hosted by the bridge's `xum.host.Hosts`, and the editor it
reports to.

The ACP session id is the workspace id, so `session/load` finds the workspace again (in this
bridge or a later one) and the browser UI shows the same workspace. The session is a thin
adapter over the host: a prompt is `Hosts.send` (the host runs the turn, then a goal's
continuations, taking the writer lock per turn, so an idle editor session does not make the
project's other workspaces think an agent runs here); the host's events become `session/update`
notifications (the translator and the pump); a question or an approval request waits in the
host's pending maps and is settled from the editor's answer to a `session/request_permission`;
chat commands go through `xum.host.commands` with the `acp` row of its table.

Changing the model or the thinking level is stored on the workspace and switches the open
session for its next turn (`Hosts.configure`, no reopen); the mode (exec or plan) changes in
place, from the next request of a running turn on.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from acp import RequestError
from acp.schema import AvailableCommand

from xum.acp import options as opts
from xum.acp.delegation import EditorAbilities, EditorDelegation, EditorDelegations
from xum.acp.session_common import (
    CLOSE_WAIT_S,
    SessionBase,
    StopReason,
    command_entry,
    invalid,
    request_error,
)
from xum.context.slash import ModelCommand
from xum.core.errors import UsageError, XumError
from xum.core.images import ImageUpload
from xum.engine import events as E
from xum.host import commands
from xum.store.registry import WorkspaceRecord

if TYPE_CHECKING:
    from acp.interfaces import Client

    from xum.context.slash import WorkspaceCommand
    from xum.engine.agent import AgentSession
    from xum.host.hosts import Hosts
    from xum.host.pending import PendingQuestion
    from xum.host.workspace_host import WorkspaceHost

# Kept importable from here: the agent and older callers name them by this module.
__all__ = ["CLOSE_WAIT_S", "BridgeSession", "StopReason", "invalid", "request_error"]

log = logging.getLogger("xum.acp")


class BridgeSession(SessionBase):
    def __init__(
        self,
        client: Client,
        record: WorkspaceRecord,
        abilities: EditorAbilities,
        hosts: Hosts,
        delegations: EditorDelegations,
    ) -> None:
        super().__init__(client, record)
        self.hosts = hosts
        # The editor's files and terminals stand in for the local runtime only: on a worktree
        # or SSH host the editor's buffers are not the workspace's files.
        self.delegation = (
            EditorDelegation(client, self.id, abilities, self._terminal_started)
            if abilities.any and record.runtime == "local"
            else None
        )
        self._delegations = delegations
        if self.delegation is not None:
            delegations.by_workspace[self.id] = self.delegation
        self._last_end: E.TurnEnd | None = None
        self._failure: Exception | None = None

    # Plumbing ----------------------------------------------------------------------------

    @property
    def host(self) -> WorkspaceHost | None:
        return self.hosts.get(self.id)

    def on_event(self, event: E.Event) -> None:
        """A host event of this workspace: called inside the turn, so it never raises into it."""
        if isinstance(event, E.TurnStart) and self._cancel_requested:
            host = self.host
            if host is not None:  # a cancel that came before the turn was under way
                host.session.agent.interrupt()
        elif isinstance(event, E.TurnEnd):
            self._last_end = event
        elif isinstance(event, E.ApprovalRequest):
            self._spawn(self._approve(event))
        try:
            self.pump.push(self.translator.live(event))
        except Exception:
            log.exception("could not translate a %s event", event.type)

    def on_failure(self, error: Exception) -> None:
        self._failure = error

    async def _answer_question(
        self, pending: PendingQuestion, answers: Mapping[str, str] | None
    ) -> None:
        self.hosts.questions.answer(self.id, pending.id, answers)

    async def _approve(self, request: E.ApprovalRequest) -> None:
        # By now the request waits in the host's map, unless a policy decided it without
        # asking anyone (the event comes either way): then there is nothing to ask.
        waiting = self.hosts.approvals.requests_for(self.id)
        if not any(r.request_id == request.request_id for r in waiting):
            return
        answer = await self.approver(request)
        self.hosts.approvals.answer(self.id, request.request_id, answer.decision, answer.reason)

    def _terminal_started(self, call_id: str, terminal_id: str) -> None:
        self.pump.push(self.translator.terminal_started(call_id, terminal_id))

    @property
    def delegating(self) -> bool:
        return self.delegation is not None

    # Opening -----------------------------------------------------------------------------

    async def open(self) -> None:
        """Open the workspace's host (no writer lock: each turn takes it)."""
        await self.hosts.open(self.record)

    @property
    def _agent(self) -> AgentSession | None:
        host = self.host
        if host is None or host.parts is None:
            return None
        from xum.engine.agent import AgentSession

        agent = host.session.agent
        # An external ACP agent's workspace has no engine session to read here.
        return agent if isinstance(agent, AgentSession) else None

    @property
    def mode(self) -> str:
        """exec or plan (another agent the workspace runs shows as exec, the closest mode)."""
        agent = self._agent
        mode = agent.agent_id if agent is not None else self.record.agent
        return mode if mode in opts.MODE_IDS else "exec"

    @property
    def model(self) -> str:
        if self.record.model:
            return self.record.model
        agent = self._agent
        return agent.route.model_string if agent is not None else ""

    @property
    def thinking(self) -> str:
        if self.record.thinking:
            return self.record.thinking
        agent = self._agent
        return agent.settings.thinking if agent is not None else "medium"

    async def available_commands(self) -> list[AvailableCommand]:
        """The slash commands a prompt may start with in this session: the chat commands the
        `acp` row of `xum.host.commands.OFFERED` lists (each works here), the workspace's
        user-invocable skills, and the aliases of the models that can be used now (one message
        with another model)."""
        from xum.context.slash import suggestions
        from xum.llm.catalog import aliases

        offered = {s.name for s in commands.suggestions("acp")}
        agent = self._agent
        skills = await agent.context.provider.skill_catalog() if agent is not None else None
        usable = await asyncio.to_thread(opts.usable_aliases)
        out = []
        # Every alias still shadows a skill of its name (typing it picks the alias), but only
        # those of a provider with a key are offered: the others would only fail.
        for entry in suggestions(skills, set(aliases())):
            name = entry.name.removeprefix("/")
            if name in ("", "+"):
                continue
            if entry.kind == "command" and entry.name not in offered:
                continue
            if entry.kind == "override" and name not in usable:
                continue
            out.append(command_entry(name, entry.description, entry.argument_hint))
        return out

    # Settings ----------------------------------------------------------------------------

    async def set_mode(self, mode: str) -> None:
        from xum.store import registry

        self._check_mode(mode)
        self.record = await asyncio.to_thread(registry.update_workspace, self.id, agent=mode)
        agent = self._agent
        if agent is not None and agent.agent_id != mode:
            agent.set_mode("plan" if mode == "plan" else "exec")

    async def set_model(self, model: str) -> str:
        """Check the model (its provider must be usable), store it with the thinking level
        clamped to its range, and switch the session to it from the next turn on."""
        from xum.engine.route import resolve_route
        from xum.llm.thinking import parse_thinking

        route = await asyncio.to_thread(resolve_route, model)
        thinking = parse_thinking(self.thinking, route.provider, route.model_id)
        self.record = await self.hosts.configure(
            self.id, model=route.model_string, thinking=thinking
        )
        return route.model_string

    async def set_thinking(self, level: str) -> None:
        from xum.llm.catalog import resolve_model_string
        from xum.llm.thinking import parse_thinking

        provider, model_id = resolve_model_string(self.model)
        parsed = parse_thinking(level, provider, model_id)
        self.record = await self.hosts.configure(self.id, thinking=parsed)

    # Prompts -----------------------------------------------------------------------------

    async def _run_prompt(self, text: str, images: Sequence[ImageUpload] = ()) -> StopReason:
        try:
            command = commands.parse(text, "acp")
            if command is not None and images:
                raise UsageError(
                    "images cannot go with a chat command", hint="send them in a plain message"
                )
            if commands.is_workspace_command(command):
                return await self._workspace_command(command)
            await self._title_from(text)
            self.translator.last_finish = None
            self._last_end, self._failure = None, None
            await self.hosts.send(self.record, text, images=images)
        except XumError as exc:
            raise request_error(exc) from None
        # The host's drive: the turn, then what a goal continues with (engine.goals).
        host = self.host
        if host is not None and host.task is not None:
            await asyncio.wait({host.task})
        await self.pump.drain()
        return self._stop_reason_after(self._last_end)

    def _raise_failure(self) -> None:
        if self._failure is not None:
            failure = self._failure
            if isinstance(failure, XumError):
                raise request_error(failure)
            raise RequestError(-32603, f"the turn failed: {failure}", None)

    async def _workspace_command(self, command: WorkspaceCommand) -> StopReason:
        """`/model` switches the session's model for the next turn; `/idle` sets the project's
        idle compaction (`xum.host.commands`). Nothing is sent to a model."""
        if isinstance(command, ModelCommand):
            if command.model is None:
                raise invalid(
                    "/model needs a model: an alias or provider:model (e.g. /model sonnet)"
                )
            await self._model_switched(await self.set_model(command.model))
        else:
            result = await commands.apply(self.hosts, self.record, command)
            self._idle_set(result.idle_hours)
        await self.pump.drain()
        return "end_turn"

    async def _store_title(self, title: str) -> WorkspaceRecord:
        from xum.store import registry

        return await asyncio.to_thread(registry.update_workspace, self.id, title=title)

    def cancel(self) -> None:
        """`session/cancel`: stop the running turn (its tools, its stream, a pending question);
        the prompt then answers `cancelled`."""
        if not self._running:
            return
        self._cancel_requested = True
        host = self.host
        if host is not None and host.busy:
            host.interrupt()

    # Closing -----------------------------------------------------------------------------

    async def _release(self) -> None:
        self._delegations.by_workspace.pop(self.id, None)
        await self.hosts.close_workspace(self.id, wait_s=CLOSE_WAIT_S)

    async def replay_history(self) -> None:
        """`session/load`: the session so far, as updates, before the load answers."""
        from xum.engine.derive import replay_events

        host = self.host
        assert host is not None
        for event in replay_events(host.session.log.frames):
            self.pump.push(self.translator.replayed(event))
        await self.pump.drain()
