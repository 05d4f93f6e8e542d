"""The terminal UI's agent sessions: one engine session per workspace that works, all on the
app's event loop.

Each workspace the UI shows is a `Workspace`: its record, its transcript (folded from the
session log, then from live events), and, once a message was sent to it, the session the one
assembly (`xum.workspaces.assembly.open_workspace_session`) opened for it. Several workspaces
run turns at once, exactly as in the server: a turn mostly waits on the model and on tools, and
the slow steps of opening a session run on worker threads, so one loop serves them all and the
UI stays responsive.

Messages sent while a turn runs are queued in the engine: "step" ones are delivered when the
running tool calls finish, "turn" ones run as turns of their own, one after another. An
interrupt hands the queue back (the UI puts it back in the composer) instead of running it.
`ask_user_question` reaches the user through the session's `ask_user`: the question waits in
`Workspace.question` until the UI answers or dismisses it (a chat message instead dismisses
it, as in the browser). A call that needs approval (a critical command, a sandbox escalation, and
in the `ask` mode the rest of what it asks for) waits the same way in `Workspace.approval`.

The writer lock decides who writes: a workspace whose session another process (`xum server`,
`xum run`) is using has its log followed instead (committed events appear as that process writes
them). A message to it goes to that turn through the server's API when the server runs it (and
Esc interrupts it there); any other writer's turn refuses it with a clear error.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from xum.core.errors import XumError
from xum.engine import events as E
from xum.tui.remote import ServerTurns
from xum.tui.transcript import Change, Transcript

if TYPE_CHECKING:
    from xum.store.registry import WorkspaceRecord
    from xum.store.sessionlog import SessionLog
    from xum.tools.base import Question
    from xum.workspaces.assembly import WorkspaceSession
    from xum.workspaces.lifecycle import CreatedWorkspace
    from xum.workspaces.safety.approvals import ApprovalAnswer

log = logging.getLogger("xum.tui")

When = Literal["step", "turn"]
Status = Literal["idle", "working", "waiting", "error", "unread"]
Answers = Mapping[str, str] | None


class SessionBusyError(XumError):
    code = "session_busy"


@dataclass(eq=False)
class PendingQuestion:
    questions: Sequence[Question]
    future: asyncio.Future[Answers] = field(repr=False)
    remote_id: str | None = None  # its id at the server, when a turn of `xum server` asks


@dataclass(eq=False)
class PendingApproval:
    request: E.ApprovalRequest
    future: asyncio.Future[ApprovalAnswer] = field(repr=False)
    remote_id: str | None = None  # its request id at the server, when the server's turn asks


@dataclass(eq=False)
class Workspace:
    record: WorkspaceRecord
    transcript: Transcript = field(default_factory=Transcript)
    loaded: bool = False
    loading: list[E.Event] | None = None  # live events that came while the history was read
    session: WorkspaceSession | None = None
    task: asyncio.Task[None] | None = None
    question: PendingQuestion | None = None
    approval: PendingApproval | None = None
    failed: bool = False  # the last turn ended on an error
    unread: bool = False
    stale: bool = False  # settings changed while a turn ran: reopen after it
    prepared: CreatedWorkspace | None = None  # just created: its runtime and init hook
    busy_elsewhere: bool = False
    followed: SessionLog | None = None  # the log, read while another process writes it

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()

    @property
    def status(self) -> Status:
        if self.question is not None or self.approval is not None:
            return "waiting"
        if self.running or self.busy_elsewhere:
            return "working"
        if self.failed:
            return "error"
        return "unread" if self.unread else "idle"

    @property
    def queued(self) -> tuple[int, int]:
        return self.session.agent.queued if self.session is not None else (0, 0)


class Listener(Protocol):
    """What the app is told; every call comes on the app's loop."""

    def transcript_changed(self, workspace: Workspace, changes: list[Change]) -> None: ...

    def status_changed(self, workspace: Workspace) -> None: ...


class Runner:
    def __init__(self, listener: Listener) -> None:
        self.listener = listener
        self.workspaces: dict[str, Workspace] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._background: set[asyncio.Task[None]] = set()
        self.server = ServerTurns(self)

    def spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        """Run `coro` in the background, kept until it ends."""
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # Tracking ----------------------------------------------------------------------------

    def track(self, record: WorkspaceRecord) -> Workspace:
        ws = self.workspaces.get(record.id)
        if ws is None:
            ws = self.workspaces[record.id] = Workspace(record)
        else:
            ws.record = record
        return ws

    async def load(self, ws: Workspace) -> None:
        """Fold the workspace's recorded history into its transcript (once). Live events that
        arrive while the log is read (a sub-agent at work) wait, then follow it in order."""
        if ws.loaded or ws.loading is not None:
            return
        ws.loading = []
        try:
            events: list[E.Event] = list(await asyncio.to_thread(_history, ws.id))
        finally:
            waiting, ws.loading = ws.loading or [], None
            ws.loaded = True
        changes: list[Change] = []
        for event in [*events, *waiting]:
            changes.extend(ws.transcript.fold(event))  # what both have is folded once (seq)
        if changes:
            self.listener.transcript_changed(ws, changes)

    async def poll_external(self, workspaces: list[Workspace]) -> None:
        """Follow logs other processes write (a turn of `xum server` or `xum run`): whose
        writer lock is held elsewhere, then the new frames of those (and of any that just
        stopped), all read on a worker thread."""
        idle = [ws for ws in workspaces if not ws.running]
        busy = await asyncio.to_thread(_busy, [ws.id for ws in idle])
        for ws in idle:
            if ws.running:  # a turn of ours started meanwhile
                continue
            elsewhere = busy.get(ws.id, False)
            if elsewhere != ws.busy_elsewhere:
                ws.busy_elsewhere = elsewhere
                if elsewhere and ws.session is not None:
                    # Our idle session's view of the log goes stale while another process
                    # writes it: it reopens, from the log, for the next message.
                    await self.release(ws)
                self.listener.status_changed(ws)
            if not elsewhere and ws.followed is None:
                continue
            log_, events = await asyncio.to_thread(
                _follow, ws.id, ws.followed, ws.transcript.last_seq
            )
            ws.followed, ws.loaded = log_, True
            changes: list[Change] = []
            for event in events:
                changes.extend(ws.transcript.fold(event))
            if changes:
                self.listener.transcript_changed(ws, changes)
            if not elsewhere and ws.followed is not None:
                ws.followed.close()
                ws.followed = None
            await self.server.sync(ws)  # what a server's turn waits for (or takes it down)

    # Creating ----------------------------------------------------------------------------

    async def create(self, directory: Path, runtime: str, **fields: Any) -> Workspace:
        """`lifecycle.create_workspace`; the runtime and init hook are kept for the first turn,
        and the init hook's output goes to the new workspace's transcript."""
        from xum.workspaces.lifecycle import create_workspace

        holder: list[Workspace] = []

        def on_line(line: str) -> None:
            if holder:
                self._emit(holder[0], E.InitOutput(line=line))

        created = await create_workspace(directory, runtime, on_init_line=on_line, **fields)
        return self._adopt(created, holder)

    async def fork(self, source: Workspace, name: str | None) -> Workspace:
        from xum.workspaces.lifecycle import fork_workspace

        created = await fork_workspace(source.id, name)
        return self._adopt(created, [], empty=False)

    def _adopt(
        self, created: CreatedWorkspace, holder: list[Workspace], *, empty: bool = True
    ) -> Workspace:
        ws = self.track(created.record)
        ws.prepared = created
        ws.loaded = empty  # a new workspace has no history to read; a fork has its source's
        holder.append(ws)
        init = created.init
        if init is not None:

            async def announce() -> None:
                status = await init.wait()
                self._emit(ws, E.InitEnd(status=status, exit_code=init.exit_code))

            self.spawn(announce())
        return ws

    # Sending -----------------------------------------------------------------------------

    async def send(
        self, ws: Workspace, text: str, when: When = "step"
    ) -> Literal["started", "queued"]:
        """Run `text` as a turn, or queue it when a turn runs. Raises XumError when it cannot
        start (another process holds the session, no provider, an unknown model)."""
        async with self._locks.setdefault(ws.id, asyncio.Lock()):
            if ws.question is not None:
                self.answer(ws, None)  # a chat message instead of an answer
            if ws.running and ws.session is not None:
                ws.session.agent.queue_message(text, when)
                self.listener.status_changed(ws)
                return "queued"
            if ws.record.archived_at is not None:
                raise XumError(
                    "this workspace is archived", hint="unarchive it to continue the chat"
                )
            from xum.store import sessions as session_files

            if session_files.is_busy(ws.id):
                link = await self.server.link_for(ws)
                if link is not None:
                    # The server runs this turn: the message joins it there, as from the browser
                    # (what the turn does shows here as the log is followed).
                    await link.send(ws.id, text, when)
                    self.listener.status_changed(ws)
                    return "queued"
                holder = session_files.lock_holder(ws.id) or {}
                who = str(holder.get("purpose") or "another process")
                raise SessionBusyError(
                    f"{who} is using this workspace's session right now",
                    hint="wait for its turn to end (it shows here as it goes), then send again",
                )
            await self.load(ws)
            if ws.session is None:
                ws.session = await self._open(ws)
            ws.failed = False
            ws.task = asyncio.create_task(self._drive(ws, text), name=f"tui turn {ws.id}")
            self.listener.status_changed(ws)
            return "started"

    async def _open(self, ws: Workspace) -> WorkspaceSession:
        from xum.workspaces.assembly import open_workspace_session, route_for

        route, thinking = await asyncio.to_thread(route_for, ws.record)
        prepared, ws.prepared = ws.prepared, None
        try:
            return await open_workspace_session(
                ws.record,
                route=route,
                thinking=thinking,
                emit=lambda event: self._emit(ws, event),
                created=prepared,
                ask_user=lambda questions: self._ask(ws, questions),
                approver=lambda request: self._approve(ws, request),
                children=self._child_event,
                purpose="tui",
            )
        except BaseException:
            if prepared is not None:
                await _drop_prepared(prepared)
            raise

    async def _drive(self, ws: Workspace, text: str) -> None:
        next_text: str | None = text
        try:
            while next_text is not None and ws.session is not None:
                reason = await self._one_turn(ws, next_text)
                queued = ws.session.agent.next_queued() if ws.session is not None else None
                next_text = None if reason == "interrupted" else queued
        finally:
            ws.task = None
            self.listener.status_changed(ws)
            if ws.stale:
                await self.release(ws)

    async def _one_turn(self, ws: Workspace, text: str) -> str:
        assert ws.session is not None
        try:
            result = await ws.session.agent.run_turn(text)
            if result.reason == "error":
                ws.failed = True
            return str(result.reason)
        except asyncio.CancelledError:
            raise
        except XumError as exc:
            self._report(ws, exc.code, exc.message, exc.hint, text)
            return "error"
        except Exception as exc:  # a bug: keep the UI up and say so
            log.exception("turn failed in workspace %s", ws.id)
            self._report(
                ws, "internal_error", f"the turn failed: {type(exc).__name__}: {exc}", None, text
            )
            return "error"

    def _report(self, ws: Workspace, code: str, message: str, hint: str | None, text: str) -> None:
        ws.failed = True
        self.listener.transcript_changed(ws, ws.transcript.error(code, message, hint, text))

    def _emit(self, ws: Workspace, event: E.Event) -> None:
        if not ws.loaded:
            if ws.loading is not None:
                ws.loading.append(event)
            # Otherwise it is not on screen and its history is not read yet: the log has the
            # committed events for when it is.
            return
        changes = ws.transcript.fold(event)
        if changes:
            self.listener.transcript_changed(ws, changes)
        if isinstance(event, E.ErrorEvent):
            ws.failed = True
        if isinstance(event, E.TurnEnd):
            ws.unread = True  # the app clears it for the workspace on screen
        if isinstance(event, E.TurnStart | E.TurnEnd | E.UserMessage | E.ErrorEvent):
            self.listener.status_changed(ws)

    def _child_event(self, workspace_id: str, event: E.Event) -> None:
        """Events of sub-agents: their status to the parent's transcript, and each child's own
        events to its workspace, when the UI lists it."""
        ws = self.workspaces.get(workspace_id)
        if ws is not None:
            self._emit(ws, event)

    # Interrupting and questions ----------------------------------------------------------

    def interrupt(self, ws: Workspace) -> list[str] | None:
        """Stop the running turn; the messages still queued are handed back. None: no turn ran."""
        if not ws.running or ws.session is None:
            return None
        unsent: list[str] = ws.session.agent.take_queue()
        ws.session.agent.interrupt()
        self.listener.status_changed(ws)
        return unsent

    async def start_here(self, ws: Workspace, seq: int) -> None:
        """Make the reply or plan at `seq` the whole context (a boundary frame, instant and
        free; docs/compaction.md). Raises XumError while a turn runs, here or elsewhere."""
        from xum.store import sessions as session_files

        async with self._locks.setdefault(ws.id, asyncio.Lock()):
            if ws.running or session_files.is_busy(ws.id):
                raise XumError(
                    "a turn is running in this workspace", hint="use Start Here once it has ended"
                )
            await self.load(ws)
            if ws.session is None:
                ws.session = await self._open(ws)
            await ws.session.agent.compactor.start_here(seq)
        self.listener.status_changed(ws)

    async def _ask(self, ws: Workspace, questions: Sequence[Question]) -> Answers:
        future: asyncio.Future[Answers] = asyncio.get_running_loop().create_future()
        if ws.question is not None and not ws.question.future.done():
            ws.question.future.set_result(None)  # a newer question replaces it
        pending = PendingQuestion(list(questions), future)
        ws.question = pending
        self.listener.status_changed(ws)
        try:
            return await future
        finally:
            if ws.question is pending:
                ws.question = None
                self.listener.status_changed(ws)

    async def _approve(self, ws: Workspace, request: E.ApprovalRequest) -> ApprovalAnswer:
        """Wait for the user's decision; an interrupt cancels the wait (the call is denied)."""
        future: asyncio.Future[ApprovalAnswer] = asyncio.get_running_loop().create_future()
        pending = PendingApproval(request, future)
        ws.approval = pending
        self.listener.status_changed(ws)
        try:
            return await future
        finally:
            if ws.approval is pending:
                ws.approval = None
                self.listener.status_changed(ws)

    def decide(self, ws: Workspace, answer: ApprovalAnswer) -> bool:
        """Answer the call waiting for approval."""
        pending = ws.approval
        if pending is None or pending.future.done():
            return False
        pending.future.set_result(answer)
        return True

    def answer(self, ws: Workspace, answers: Answers) -> bool:
        """Answer the pending question (None dismisses it)."""
        pending = ws.question
        if pending is None or pending.future.done():
            return False
        pending.future.set_result(dict(answers) if answers is not None else None)
        return True

    # Settings and closing ----------------------------------------------------------------

    async def changed(self, ws: Workspace, record: WorkspaceRecord) -> None:
        """The workspace's model, thinking level or agent changed: the session reopens with
        them for the next turn (after the running one)."""
        ws.record = record
        if ws.running:
            ws.stale = True
        else:
            await self.release(ws)

    async def release(self, ws: Workspace) -> None:
        """Close the workspace's session (it reopens on the next message)."""
        session, ws.session, ws.stale = ws.session, None, False
        if session is not None:
            with contextlib.suppress(Exception):
                await session.aclose()

    async def close(self, ws: Workspace, wait_s: float = 10.0) -> None:
        """Interrupt a running turn (archive, delete) and release everything of `ws`."""
        if ws.session is not None:
            ws.session.agent.take_queue()
        task = ws.task
        if task is not None and ws.session is not None:
            ws.session.agent.interrupt()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(task), wait_s)
        await self.release(ws)
        if ws.prepared is not None:
            await _drop_prepared(ws.prepared)
            ws.prepared = None
        if ws.followed is not None:
            ws.followed.close()
            ws.followed = None

    def forget(self, ws: Workspace) -> None:
        self.workspaces.pop(ws.id, None)

    async def shutdown(self, wait_s: float = 10.0) -> None:
        """Stop every turn (each ends durably, as interrupted) and release every session."""
        await asyncio.gather(*(self.close(ws, wait_s) for ws in list(self.workspaces.values())))


async def _drop_prepared(created: CreatedWorkspace) -> None:
    if created.init is not None:
        with contextlib.suppress(Exception):
            created.init.cancel()
    with contextlib.suppress(Exception):
        await created.runtime.close()


def _history(workspace_id: str) -> list[E.Committed]:
    """The committed events of a workspace's log (a worker thread: a long log takes a while)."""
    from xum.engine.derive import frame_event
    from xum.store import sessions as session_files
    from xum.store.sessionlog import SessionLog

    if not session_files.has_log(workspace_id):
        return []
    log_ = SessionLog.open(workspace_id, purpose="xum tui")
    try:
        return [e for e in map(frame_event, log_.frames) if e is not None]
    finally:
        log_.close()


def _busy(workspace_ids: list[str]) -> dict[str, bool]:
    from xum.store import sessions as session_files

    return {ws: session_files.is_busy(ws) for ws in workspace_ids}


def _follow(
    workspace_id: str, log_: SessionLog | None, after: int
) -> tuple[SessionLog, list[E.Committed]]:
    """Open (or refresh) a log another process writes; the events after `after`."""
    from xum.engine.derive import frame_event
    from xum.store.sessionlog import SessionLog

    if log_ is None:
        log_ = SessionLog.open(workspace_id, purpose="xum tui")
    else:
        log_.refresh()
    events = [e for e in map(frame_event, log_.frames_after(after)) if e is not None]
    return log_, events
