"""One ACP session on a workspace of a running `xum server` (`xum acp --server-url`).

The server hosts the workspace; this session is an adapter over `RemoteHosts`: a prompt is a
message sent to the server, its turn (and what a goal continues with) arrives as the server's
events over its WebSocket and becomes `session/update` notifications, the editor answers the
questions and approvals the server's session waits on, and settings go to the workspace on the
server. The browser shows the same turns live, and what the browser sends shows here.

What does not cross the server: the editor's files and terminals (the server's session uses its
own runtime), and the editor's MCP servers (as in-process).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

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
from xum.acp.pump import UpdatePump
from xum.acp.questions import EditorQuestions
from xum.acp.updates import SessionUpdate, UpdateTranslator, note
from xum.core.errors import UsageError, XumError
from xum.engine import events as E
from xum.host import commands

if TYPE_CHECKING:
    from acp.interfaces import Client

    from xum.host.pending import PendingQuestion
    from xum.host.remote import RemoteHosts
    from xum.store.registry import WorkspaceRecord

log = logging.getLogger("xum.acp")

CLOSE_WAIT_S = 10.0


def _invalid(message: str) -> RequestError:
    return RequestError(-32602, message, {"message": message})


def _request_error(exc: XumError) -> RequestError:
    text = f"{exc.message} (hint: {exc.hint})" if exc.hint else exc.message
    code = -32602 if isinstance(exc, UsageError) or exc.code == "usage_error" else -32603
    return RequestError(code, text, exc.to_dict())


class RemoteBridgeSession:
    def __init__(self, client: Client, record: WorkspaceRecord, hosts: RemoteHosts) -> None:
        self.client = client
        self.id = record.id
        self.record = record
        self.hosts = hosts
        self.translator = UpdateTranslator(record.path)
        self.pump = UpdatePump(self._send)
        self.questions = EditorQuestions(
            client, self.id, self.pump.drain, lambda: self.translator.question_call
        )
        self.approver = EditorApprover(client, self.id, self.pump.drain)
        self._running = False
        self._cancel_requested = False
        self._unreachable = False
        self._ends: list[E.TurnEnd] = []  # turns that ended since the prompt was sent
        self._changed = asyncio.Event()
        self._asking: set[asyncio.Task[None]] = set()
        self._approving: set[str] = set()  # approval requests the editor was asked about
        self._finished = asyncio.Event()
        self._finished.set()
        # What this step's reply streamed so far: a reconnect replays it (as `discard-partial`
        # plus the text so far), and only the part the editor has not seen is sent again.
        self._streamed = ""
        self._resuming = False

    async def _send(self, update: SessionUpdate) -> None:
        await self.client.session_update(session_id=self.id, update=update)

    def push(self, *updates: SessionUpdate) -> None:
        self.pump.push(updates)

    # Host events -------------------------------------------------------------------------

    def on_event(self, event: E.Event) -> None:
        if isinstance(event, E.TurnEnd):
            self._ends.append(event)
        elif isinstance(event, E.ApprovalRequest):
            self._spawn(self._approve(event))
        self._changed.set()
        for update in self._updates(event):
            self.pump.push([update])

    def _updates(self, event: E.Event) -> list[SessionUpdate]:
        if isinstance(event, E.AssistantMessage):
            self._streamed, self._resuming = "", False
        elif isinstance(event, E.StepStart):
            if not self._resuming:  # a resumed partial names its step again: same reply
                self._streamed = ""
        elif isinstance(event, E.DiscardPartial):
            self._resuming = True  # a resubscribe or a dropped model reply: decided below
            return []
        elif isinstance(event, E.TextDelta):
            if self._resuming:
                self._resuming = False
                if event.text.startswith(self._streamed):
                    event = E.TextDelta(text=event.text[len(self._streamed) :])
                else:
                    self.pump.push([note("the reply starts over")])
                    self._streamed = ""
            self._streamed += event.text
        try:
            return self.translator.live(event)
        except Exception:
            log.exception("could not translate a %s event", event.type)
            return []

    def on_status(self) -> None:
        self._changed.set()

    def on_question(self, pending: PendingQuestion) -> None:
        self._spawn(self._ask(pending))

    async def _ask(self, pending: PendingQuestion) -> None:
        answers = await self.questions(pending.questions)
        with contextlib.suppress(XumError):
            await self.hosts.answer_question(self.id, pending.id, answers)

    async def _approve(self, request: E.ApprovalRequest) -> None:
        # A waiting request is sent again after every resubscribe: ask the editor once. One a
        # policy decided (the event comes either way) or the browser answered meanwhile is
        # no longer among the waiting ones by the time the updates before it are out.
        if request.request_id in self._approving:
            return
        self._approving.add(request.request_id)
        await self.pump.drain()
        waiting = self.hosts.approval_requests(self.id)
        if not any(r.request_id == request.request_id for r in waiting):
            return
        answer = await self.approver(request)
        with contextlib.suppress(XumError):
            await self.hosts.answer_approval(
                self.id, request.request_id, answer.decision, answer.reason
            )

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(coro)
        self._asking.add(task)
        task.add_done_callback(self._asking.discard)

    # Opening -----------------------------------------------------------------------------

    async def open(self, *, replay: bool) -> None:
        """Stream the workspace from the server; with `replay`, the session so far first."""
        after = 0
        if replay:
            for event in await self.hosts.history(self.id):
                if isinstance(event, E.Committed):
                    self.pump.push(self.translator.replayed(event))
                    after = max(after, event.seq or 0)
            await self.pump.drain()
        else:
            after = int((self.hosts.status(self.id) or {}).get("lastSeq") or 0)
        await self.hosts.subscribe(self.id, after_seq=after)

    @property
    def mode(self) -> str:
        return self.record.agent if self.record.agent in opts.MODE_IDS else "exec"

    @property
    def model(self) -> str:
        return self.record.model or ""

    @property
    def thinking(self) -> str:
        return self.record.thinking or "medium"

    async def config_options(self) -> list[opts.ConfigOption]:
        models = await asyncio.to_thread(opts.model_choices, self.model)
        return opts.config_options(self.mode, self.model, self.thinking, models)

    async def available_commands(self) -> list[AvailableCommand]:
        """What the server's `/` offers in this workspace, less the chat commands the `acp`
        row of `xum.host.commands.OFFERED` leaves out."""
        offered = {s.name for s in commands.suggestions("acp")}
        try:
            listed = await self.hosts.slash_commands(self.id)
        except XumError:
            return []
        out = []
        for entry in listed:
            name = str(entry.get("name", ""))
            if not name.startswith("/") or name in ("/", "/+"):
                continue
            if entry.get("kind") == "command" and name not in offered:
                continue
            hint = entry.get("usage")
            out.append(
                AvailableCommand(
                    name=name[1:],
                    description=str(entry.get("description") or ""),
                    input=AvailableCommandInput(UnstructuredCommandInput(hint=str(hint)))
                    if hint
                    else None,
                )
            )
        return out

    async def announce_commands(self) -> None:
        self.push(update_available_commands(await self.available_commands()))

    # Settings ----------------------------------------------------------------------------

    async def set_mode(self, mode: str) -> None:
        if mode not in opts.MODE_IDS:
            raise _invalid(f"unknown mode '{mode}'; the modes are {', '.join(opts.MODE_IDS)}")
        self.record = await self.hosts.change_settings(self.id, agent=mode)

    async def set_model(self, model: str) -> str:
        self.record = await self.hosts.change_settings(self.id, model=model)
        return self.record.model or model

    async def set_thinking(self, level: str) -> None:
        self.record = await self.hosts.change_settings(self.id, thinking=level)

    # Prompts -----------------------------------------------------------------------------

    async def prompt(self, text: str) -> str:
        if self._running:
            raise _invalid("a prompt is already running in this session; cancel it first")
        self._running = True
        self._cancel_requested = self._unreachable = False
        self._finished.clear()
        try:
            try:
                command = commands.parse(text, "acp")  # refuses what an editor does not offer
                await self._title_from(text)
                self.translator.last_finish = None
                self._ends = []
                sent = await self.hosts.send_message(self.id, text)
            except XumError as exc:
                raise _request_error(exc) from None
            if sent.disposition == "command":
                return await self._command_done(command, sent.record, sent.idle_hours)
            await self._until_idle()
            await self.pump.drain()
            return self._stop_reason()
        finally:
            self._running = False
            self._finished.set()

    async def _until_idle(self) -> None:
        """Until a turn ended after the prompt and the server drives nothing more here (a
        queued message or a goal's continuation runs before the prompt answers)."""
        while not (self._ends and not self.hosts.is_running(self.id)):
            if self._unreachable:
                raise RequestError(
                    -32603,
                    f"the xum server at {self.hosts.target.url} did not answer; the turn may "
                    "still run there (hint: check the server, then load the session again)",
                    None,
                )
            self._changed.clear()
            await self._changed.wait()

    async def _command_done(
        self, command: object, record: WorkspaceRecord | None, idle_hours: float | None
    ) -> str:
        from xum.context.slash import ModelCommand

        if record is not None:
            self.record = record
        if isinstance(command, ModelCommand):
            self.push(
                note(f"the model is now {self.model}, from the next message on"),
                ConfigOptionUpdate(
                    session_update="config_option_update",
                    config_options=await self.config_options(),
                ),
            )
        else:
            self.push(
                note("idle compaction is off for this project")
                if idle_hours is None
                else note(f"idle compaction after {idle_hours:g} idle hours in this project")
            )
        await self.pump.drain()
        return "end_turn"

    def _stop_reason(self) -> str:
        end = self._ends[-1] if self._ends else None
        if self._cancel_requested or (end is not None and end.reason == "interrupted"):
            return "cancelled"
        if end is not None and end.reason == "error":
            error = end.error or {}
            message = str(error.get("message") or "the turn failed")
            if error.get("hint"):
                message += f" (hint: {error['hint']})"
            raise RequestError(-32603, message, error)
        if end is not None and end.reason == "max_steps":
            return "max_turn_requests"
        if self.translator.last_finish in ("refusal", "content_filter"):
            return "refusal"
        if self.translator.last_finish == "length":
            return "max_tokens"
        return "end_turn"

    async def _title_from(self, text: str) -> None:
        if self.record.title:
            return
        title = " ".join(text.split())[:80]
        if title:
            self.record = await self.hosts.change_settings(self.id, title=title)
            self.push(SessionInfoUpdate(session_update="session_info_update", title=title))

    def cancel(self) -> None:
        """`session/cancel`: the server stops the running turn; the prompt answers
        `cancelled` once it ended."""
        if not self._running:
            return
        self._cancel_requested = True
        self._spawn(self._interrupt())

    async def _interrupt(self) -> None:
        try:
            await self.hosts.interrupt(self.id)
        except XumError:
            # The server cannot be reached: the prompt stops waiting for a turn end it would
            # never be told of.
            self._unreachable = True
            self._changed.set()

    # Closing -----------------------------------------------------------------------------

    async def close(self) -> None:
        """The editor went away: a turn this session started is stopped, as in-process."""
        self.cancel()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._finished.wait(), CLOSE_WAIT_S)
        for task in list(self._asking):
            task.cancel()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.pump.close(), 2.0)
        with contextlib.suppress(Exception):
            await self.hosts.unsubscribe(self.id)
