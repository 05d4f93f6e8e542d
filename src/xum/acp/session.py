"""One ACP session: a xum workspace, its open agent session, and the editor it reports to.

The ACP session id is the workspace id, so `session/load` finds the workspace again (in this
bridge or a later one) and the browser UI shows the same workspace. The session is opened
through the one assembly (`open_workspace_session`), holding the workspace's writer lock for as
long as the editor keeps it, with four things of the bridge's own: the event sink (events
become `session/update` notifications through the translator and the pump), the `ask_user`
callback and the approver (both permission requests) and, when the editor can take them, the
delegation of file reads, writes and commands to the editor.

Changing the model or the thinking level is stored on the workspace and takes effect from the
next prompt, when the session is reopened with them; the mode (exec or plan) changes in place,
from the next request of a running turn on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Literal

from acp import RequestError
from acp.helpers import update_available_commands
from acp.schema import (
    AvailableCommand,
    AvailableCommandInput,
    ConfigOptionUpdate,
    SessionInfoUpdate,
    UnstructuredCommandInput,
)

from xum.acp import options as opts
from xum.acp.approvals import EditorApprover
from xum.acp.delegation import EditorAbilities, EditorDelegation
from xum.acp.pump import UpdatePump
from xum.acp.questions import EditorQuestions
from xum.acp.updates import SessionUpdate, UpdateTranslator, note
from xum.core.errors import UsageError, XumError
from xum.engine import events as E
from xum.store.registry import WorkspaceRecord

if TYPE_CHECKING:
    from acp.interfaces import Client

    from xum.engine.turn import TurnResult
    from xum.workspaces.assembly import WorkspaceSession
    from xum.workspaces.lifecycle import CreatedWorkspace

log = logging.getLogger("xum.acp")

StopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]
CLOSE_WAIT_S = 10.0  # how long closing waits for an interrupted turn to end durably


def invalid(message: str) -> RequestError:
    """A request the bridge cannot carry out as asked: the message is what the editor shows."""
    return RequestError(-32602, message, {"message": message})


def request_error(exc: XumError) -> RequestError:
    """A xum error as a JSON-RPC error the editor shows: the message, then what to do."""
    text = f"{exc.message} (hint: {exc.hint})" if exc.hint else exc.message
    code = -32602 if isinstance(exc, UsageError) else -32603
    return RequestError(code, text, exc.to_dict())


class InitLines:
    """`.xum/init` output from the moment the workspace is made, before its session exists."""

    def __init__(self) -> None:
        self._held: list[str] = []
        self._emit: E.EventSink | None = None

    def __call__(self, line: str) -> None:
        if self._emit is None:
            self._held.append(line)
        else:
            self._emit(E.InitOutput(line=line))

    def attach(self, emit: E.EventSink) -> None:
        self._emit = emit
        held, self._held = self._held, []
        for line in held:
            emit(E.InitOutput(line=line))


class BridgeSession:
    def __init__(self, client: Client, record: WorkspaceRecord, abilities: EditorAbilities) -> None:
        self.client = client
        self.id = record.id
        self.record = record
        self.translator = UpdateTranslator(record.path)
        self.pump = UpdatePump(self._send)
        # The editor's files and terminals stand in for the local runtime only: on a worktree
        # or SSH host the editor's buffers are not the workspace's files.
        self.delegation = (
            EditorDelegation(client, self.id, abilities, self._terminal_started)
            if abilities.any and record.runtime == "local"
            else None
        )
        self.questions = EditorQuestions(
            client, self.id, self.pump.drain, lambda: self.translator.question_call
        )
        self.approver = EditorApprover(client, self.id, self.pump.drain)
        self.opened: WorkspaceSession | None = None
        self._created: CreatedWorkspace | None = None
        self._running = False
        self._cancel_requested = False
        self._stale = False
        self._finished = asyncio.Event()
        self._finished.set()

    # Plumbing ----------------------------------------------------------------------------

    async def _send(self, update: SessionUpdate) -> None:
        await self.client.session_update(session_id=self.id, update=update)

    def push(self, *updates: SessionUpdate) -> None:
        self.pump.push(updates)

    def _emit(self, event: E.Event) -> None:
        """The engine's event sink: called inside the turn, so it never raises into it."""
        if isinstance(event, E.TurnStart) and self._cancel_requested and self.opened is not None:
            self.opened.agent.interrupt()  # a cancel that came before the turn was under way
        try:
            self.pump.push(self.translator.live(event))
        except Exception:
            log.exception("could not translate a %s event", event.type)

    def _terminal_started(self, call_id: str, terminal_id: str) -> None:
        self.pump.push(self.translator.terminal_started(call_id, terminal_id))

    @property
    def delegating(self) -> bool:
        return self.delegation is not None

    # Opening -----------------------------------------------------------------------------

    async def open(
        self, created: CreatedWorkspace | None = None, init: InitLines | None = None
    ) -> None:
        from xum.workspaces.assembly import open_workspace_session, route_for

        self._created = created
        route, thinking = await asyncio.to_thread(route_for, self.record)
        self.opened = await open_workspace_session(
            self.record,
            route=route,
            thinking=thinking,
            emit=self._emit,
            created=created,
            ask_user=self.questions,
            approver=self.approver,
            tool_middleware=[self.delegation] if self.delegation is not None else (),
            purpose="acp",
            hold_writer=True,
        )
        if init is not None:
            init.attach(self._emit)

    async def _reopen(self) -> None:
        from xum.store import registry

        old, self.opened = self.opened, None
        if old is not None:
            await old.aclose()
        latest = await asyncio.to_thread(registry.get_workspace, self.id)
        self.record = latest or self.record
        await self.open()
        self._stale = False

    @property
    def mode(self) -> str:
        """exec or plan (another agent the workspace runs shows as exec, the closest mode)."""
        agent = self.opened.agent.agent_id if self.opened is not None else self.record.agent
        return agent if agent in opts.MODE_IDS else "exec"

    @property
    def model(self) -> str:
        if self.opened is not None and not self._stale:
            return self.opened.agent.route.model_string
        return self.record.model or ""

    @property
    def thinking(self) -> str:
        if self.opened is not None and not self._stale:
            return self.opened.agent.settings.thinking
        return self.record.thinking or "medium"

    async def config_options(self) -> list[opts.ConfigOption]:
        model = self.model
        models = await asyncio.to_thread(opts.model_choices, model)
        return opts.config_options(self.mode, model, self.thinking, models)

    async def available_commands(self) -> list[AvailableCommand]:
        """The slash commands a prompt may start with in this session: `/model`, the
        workspace's user-invocable skills, and the aliases of the models that can be used now
        (one message with another model). `/fork` is left out: it is carried out by the browser UI."""
        from xum.context.slash import FORK_COMMAND, suggestions
        from xum.llm.catalog import aliases

        skills = None
        if self.opened is not None:
            skills = await self.opened.agent.context.provider.skill_catalog()
        usable = await asyncio.to_thread(opts.usable_aliases)
        out = []
        # Every alias still shadows a skill of its name (typing it picks the alias), but only
        # those of a provider with a key are offered: the others would only fail.
        for entry in suggestions(skills, set(aliases())):
            name = entry.name.removeprefix("/")
            if name in ("", "+", FORK_COMMAND):
                continue
            if entry.kind == "override" and name not in usable:
                continue
            hint = entry.argument_hint
            out.append(
                AvailableCommand(
                    name=name,
                    description=entry.description,
                    input=AvailableCommandInput(UnstructuredCommandInput(hint=hint))
                    if hint
                    else None,
                )
            )
        return out

    async def announce_commands(self) -> None:
        self.push(update_available_commands(await self.available_commands()))

    # Settings ----------------------------------------------------------------------------

    async def set_mode(self, mode: str) -> None:
        from xum.store import registry

        if mode not in opts.MODE_IDS:
            raise invalid(f"unknown mode '{mode}'; the modes are {', '.join(opts.MODE_IDS)}")
        self.record = await asyncio.to_thread(registry.update_workspace, self.id, agent=mode)
        if self.opened is not None and self.opened.agent.agent_id != mode:
            self.opened.agent.set_mode("plan" if mode == "plan" else "exec")

    async def set_model(self, model: str) -> str:
        """Check the model (its provider must be usable), store it with the thinking level
        clamped to its range, and reopen with it before the next prompt."""
        from xum.engine.route import resolve_route
        from xum.llm.thinking import parse_thinking
        from xum.store import registry

        route = await asyncio.to_thread(resolve_route, model)
        thinking = parse_thinking(self.thinking, route.provider, route.model_id)
        self.record = await asyncio.to_thread(
            registry.update_workspace, self.id, model=route.model_string, thinking=thinking
        )
        self._stale = True
        return route.model_string

    async def set_thinking(self, level: str) -> None:
        from xum.llm.catalog import resolve_model_string
        from xum.llm.thinking import parse_thinking
        from xum.store import registry

        provider, model_id = resolve_model_string(self.model)
        parsed = parse_thinking(level, provider, model_id)
        self.record = await asyncio.to_thread(registry.update_workspace, self.id, thinking=parsed)
        self._stale = True

    # Prompts -----------------------------------------------------------------------------

    async def prompt(self, text: str) -> StopReason:
        if self._running:
            raise invalid("a prompt is already running in this session; cancel it first")
        self._running = True
        self._cancel_requested = False
        self._finished.clear()
        try:
            handled = await self._chat_command(text)
            if handled is not None:
                return handled
            try:
                if self._stale or self.opened is None:
                    await self._reopen()
                assert self.opened is not None
                await self._title_from(text)
                self.translator.last_finish = None
                result = await self.opened.agent.run_turn(text)
            except XumError as exc:
                raise request_error(exc) from None
            await self.pump.drain()
            return self._stop_reason(result)
        finally:
            self._running = False
            self._finished.set()

    def _stop_reason(self, result: TurnResult) -> StopReason:
        if self._cancel_requested or result.reason == "interrupted":
            return "cancelled"
        if result.reason == "error":
            error = result.error or {}
            message = str(error.get("message") or "the turn failed")
            if error.get("hint"):
                message += f" (hint: {error['hint']})"
            raise RequestError(-32603, message, error)
        if result.reason == "max_steps":
            return "max_turn_requests"
        if self.translator.last_finish in ("refusal", "content_filter"):
            return "refusal"
        if self.translator.last_finish == "length":
            return "max_tokens"
        return "end_turn"

    async def _chat_command(self, text: str) -> StopReason | None:
        """`/model <model>` is carried out here; `/fork` is refused (the browser UI forks)."""
        from xum.context.slash import ModelCommand, SlashError, parse_command

        try:
            command = parse_command(text)
        except SlashError as exc:
            raise invalid(str(exc)) from None
        if command is None:
            return None
        if not isinstance(command, ModelCommand):
            raise invalid(
                "/fork is not available in an editor session; fork the workspace "
                "in the browser UI (xum server)"
            )
        if command.model is None:
            raise invalid("/model needs a model: an alias or provider:model (e.g. /model sonnet)")
        try:
            model = await self.set_model(command.model)
        except XumError as exc:
            raise request_error(exc) from None
        self.push(
            note(f"the model is now {model}, from the next message on"),
            ConfigOptionUpdate(
                session_update="config_option_update", config_options=await self.config_options()
            ),
        )
        await self.pump.drain()
        return "end_turn"

    async def _title_from(self, text: str) -> None:
        """A workspace made in the editor is titled by its first prompt."""
        from xum.store import registry

        if self.record.title:
            return
        title = " ".join(text.split())[:80]
        if not title:
            return
        self.record = await asyncio.to_thread(registry.update_workspace, self.id, title=title)
        self.push(SessionInfoUpdate(session_update="session_info_update", title=title))

    def cancel(self) -> None:
        """`session/cancel`: stop the running turn (its tools, its stream, a pending question);
        the prompt then answers `cancelled`."""
        if not self._running:
            return
        self._cancel_requested = True
        if self.opened is not None:
            self.opened.agent.interrupt()

    # Closing -----------------------------------------------------------------------------

    async def close(self) -> None:
        """Stop a running turn (it ends durably, as interrupted) and release everything."""
        self.cancel()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._finished.wait(), CLOSE_WAIT_S)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.pump.close(), 2.0)
        opened, self.opened = self.opened, None
        if opened is not None:
            await opened.aclose()
        created = self._created
        if created is not None and created.init is not None:
            created.init.cancel()

    async def replay_history(self) -> None:
        """`session/load`: the session so far, as updates, before the load answers."""
        from xum.engine.derive import replay_events

        assert self.opened is not None
        for event in replay_events(self.opened.log.frames):
            self.pump.push(self.translator.replayed(event))
        await self.pump.drain()
