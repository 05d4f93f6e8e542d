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
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from acp import RequestError
from acp.schema import AvailableCommand

from xum.acp import options as opts
from xum.acp.session_common import SessionBase, StopReason, command_entry, log, request_error
from xum.acp.updates import SessionUpdate, note
from xum.core.errors import XumError
from xum.core.images import ImageUpload
from xum.engine import events as E
from xum.host import commands

if TYPE_CHECKING:
    from acp.interfaces import Client

    from xum.host.pending import PendingQuestion
    from xum.host.remote import RemoteHosts
    from xum.store.registry import WorkspaceRecord


class RemoteBridgeSession(SessionBase):
    def __init__(self, client: Client, record: WorkspaceRecord, hosts: RemoteHosts) -> None:
        super().__init__(client, record)
        self.hosts = hosts
        self._unreachable = False
        self._ends: list[E.TurnEnd] = []  # turns that ended since the prompt was sent
        self._changed = asyncio.Event()
        self._approving: set[str] = set()  # approval requests the editor was asked about
        # What this step's reply streamed so far: a reconnect replays it (as `discard-partial`
        # plus the text so far), and only the part the editor has not seen is sent again.
        self._streamed = ""
        self._resuming = False

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

    async def _answer_question(
        self, pending: PendingQuestion, answers: Mapping[str, str] | None
    ) -> None:
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
                command_entry(
                    name[1:], str(entry.get("description") or ""), str(hint) if hint else None
                )
            )
        return out

    # Settings ----------------------------------------------------------------------------

    async def set_mode(self, mode: str) -> None:
        self._check_mode(mode)
        self.record = await self.hosts.change_settings(self.id, agent=mode)

    async def set_model(self, model: str) -> str:
        self.record = await self.hosts.change_settings(self.id, model=model)
        return self.record.model or model

    async def set_thinking(self, level: str) -> None:
        self.record = await self.hosts.change_settings(self.id, thinking=level)

    # Prompts -----------------------------------------------------------------------------

    def _prompt_started(self) -> None:
        self._unreachable = False

    async def _run_prompt(self, text: str, images: Sequence[ImageUpload] = ()) -> StopReason:
        try:
            command = commands.parse(text, "acp")  # refuses what an editor does not offer
            await self._title_from(text)
            self.translator.last_finish = None
            self._ends = []
            # Images are uploaded to the server, then named by hash (RemoteHosts).
            sent = await self.hosts.send_message(self.id, text, images=images)
        except XumError as exc:
            raise request_error(exc) from None
        if sent.disposition == "command":
            return await self._command_done(command, sent.record, sent.idle_hours)
        await self._until_idle()
        await self.pump.drain()
        return self._stop_reason_after(self._ends[-1] if self._ends else None)

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
    ) -> StopReason:
        from xum.context.slash import ModelCommand

        if record is not None:
            self.record = record
        if isinstance(command, ModelCommand):
            await self._model_switched(self.model)
        else:
            self._idle_set(idle_hours)
        await self.pump.drain()
        return "end_turn"

    async def _store_title(self, title: str) -> WorkspaceRecord:
        return await self.hosts.change_settings(self.id, title=title)

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

    async def _release(self) -> None:
        """The editor went away: after the turn this session started stopped (as in-process),
        the server's events for the workspace are no longer streamed here."""
        with contextlib.suppress(Exception):
            await self.hosts.unsubscribe(self.id)
