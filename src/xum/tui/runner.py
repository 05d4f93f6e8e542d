"""The terminal UI's view of its workspaces, over the workspace host (`xum.host`).

The sessions themselves are hosted by `xum.host.hosts.Hosts` (opened with `frontend="tui"`),
exactly as in the server: one host per workspace that works, all on the app's event loop, the
same drive loop (a turn, then what was queued, then a goal's continuations), the same pending
questions and approvals. This module only keeps what the screen needs: each workspace's record,
its transcript (folded from the session log, then from the host's live events), its status for
the sidebar, and which question or approval it shows. `Runner` is the `HostListener` that turns
host events into transcript changes, and the one place the app calls the host through.

The writer lock decides who writes: a workspace whose session another process (`xum run`, a
`xum server` that started after the UI) is using has its log followed instead (committed events
appear as that process writes them), and a message to it is refused with a clear error. Attached
to a running server (`xum tui --server-url`, or its `server.lock`), the server hosts every
session instead: `attached.py` is the same view over `xum.host.remote.RemoteHosts`.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from xum.core.errors import SessionBusyError, XumError
from xum.core.images import ImageUpload
from xum.engine import events as E
from xum.tui.transcript import Change, Transcript

if TYPE_CHECKING:
    from xum.host import pending as host_pending
    from xum.host.hosts import Hosts
    from xum.host.notifications import Notice
    from xum.host.remote import RemoteHosts
    from xum.host.workspace_host import WorkspaceHost
    from xum.runtime.container_engine import EngineInfo
    from xum.store.registry import WorkspaceRecord
    from xum.store.sessionlog import SessionLog
    from xum.tools.base import Question
    from xum.workspaces.assembly import WorkspaceSession
    from xum.workspaces.devcontainer_configs import DevcontainerConfig
    from xum.workspaces.safety.approvals import ApprovalAnswer

log = logging.getLogger("xum.tui")

When = Literal["step", "turn"]
Status = Literal["idle", "working", "waiting", "error", "unread"]
Answers = Mapping[str, str] | None
INIT_KEEP = 2000  # init-hook lines kept for a workspace the UI does not list yet

__all__ = ["Runner", "SessionBusyError", "Workspace"]


@dataclass(eq=False)
class PendingQuestion:
    """A question on screen, the host's pending question `question_id`."""

    questions: Sequence[Question]
    question_id: str | None = None


@dataclass(eq=False)
class PendingApproval:
    """An approval request on screen, waiting in the host."""

    request: E.ApprovalRequest


@dataclass(eq=False)
class Workspace:
    record: WorkspaceRecord
    hosts: Hosts | None = field(default=None, repr=False)
    remote: RemoteHosts | None = field(default=None, repr=False)  # attached to a server instead
    transcript: Transcript = field(default_factory=Transcript)
    loaded: bool = False
    loading: list[E.Event] | None = None  # live events that came while the history was read
    question: PendingQuestion | None = None
    approval: PendingApproval | None = None
    failed: bool = False  # the last turn ended on an error
    unread: bool = False
    busy_elsewhere: bool = False
    followed: SessionLog | None = None  # the log, read while another process writes it
    last_sent: str = ""  # offered again on the error card of a turn that failed
    reported: BaseException | None = None  # the failure the transcript shows already

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def host(self) -> WorkspaceHost | None:
        return self.hosts.get(self.id) if self.hosts is not None else None

    @property
    def session(self) -> WorkspaceSession | None:
        host = self.host
        return host.parts if host is not None else None

    @property
    def task(self) -> asyncio.Task[None] | None:
        host = self.host
        return host.task if host is not None else None

    @property
    def running(self) -> bool:
        if self.remote is not None:
            return self.remote.is_running(self.id)
        return self.hosts is not None and self.hosts.is_driving(self.id)

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
        if self.remote is not None:  # the server's exact counts (its previews stop at 20)
            queued = (self.remote.status(self.id) or {}).get("queued") or {}
            return int(queued.get("step") or 0), int(queued.get("turn") or 0)
        if self.hosts is None or self.host is None or self.host.parts is None:
            return (0, 0)
        step, turn = self.hosts.queued(self.id)
        return len(step), len(turn)


class Listener(Protocol):
    """What the app is told; every call comes on the app's loop."""

    def transcript_changed(self, workspace: Workspace, changes: list[Change]) -> None: ...

    def status_changed(self, workspace: Workspace) -> None: ...


class Runner:
    """The app's workspaces, and the `HostListener` of the app's `Hosts`."""

    attached = False  # sessions run in this process (`attached.py`: on a server)

    def __init__(self, listener: Listener) -> None:
        self.listener = listener
        self.workspaces: dict[str, Workspace] = {}
        self._background: set[asyncio.Task[None]] = set()
        self._early: dict[str, list[E.Event]] = {}  # init output of a workspace not yet listed
        self._hosts: Hosts | None = None
        # Whether the workspace is on screen: what happens there is read as it happens, so it
        # leaves no "ended unread" item in the inbox.
        self.on_screen: Callable[[str], bool] = lambda _ws: False
        # Shows a desktop notification (`xum.tui.notify`); None: notifications are not shown.
        self.on_notice: Callable[[Notice], None] | None = None

    @property
    def hosts(self) -> Hosts:
        """The process's workspace hosts, made on first use: the host machinery is not imported
        before the UI's first frame (docs/tui.md, Speed)."""
        if self._hosts is None:
            from xum.host.hosts import Hosts
            from xum.host.workspace_host import HostOptions

            self._hosts = Hosts(
                self, options=HostOptions(frontend="tui", purpose="tui"), read_seq=self._read_seq
            )
            self._hosts.notifier.watch(self._notice)
        return self._hosts

    def _notice(self, notice: Notice) -> None:
        if self.on_notice is not None:
            self.on_notice(notice)

    def _read_seq(self, workspace_id: str) -> int:
        return sys.maxsize if self.on_screen(workspace_id) else 0

    def mark_read(self, ws: Workspace) -> None:
        """The workspace is on screen: its inbox notices leave."""
        if self._hosts is not None:  # no host yet: nothing can wait
            self._hosts.inbox.read(ws.id, sys.maxsize)

    def spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        """Run `coro` in the background, kept until it ends."""
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # Tracking ----------------------------------------------------------------------------

    def track(self, record: WorkspaceRecord) -> Workspace:
        ws = self.workspaces.get(record.id)
        if ws is None:
            ws = self.workspaces[record.id] = self._workspace(record)
        else:
            ws.record = record
        return ws

    def connect(self) -> None:
        return None  # the sessions are this process's own: nothing to connect to

    def _workspace(self, record: WorkspaceRecord) -> Workspace:
        return Workspace(record, self.hosts)

    async def list_records(
        self, project_root: Path, *, archived: bool = False
    ) -> list[WorkspaceRecord]:
        """The project's workspaces (the archived ones with `archived`), newest first."""
        from xum.workspaces.lifecycle import list_workspaces

        project = str(project_root)
        return await asyncio.to_thread(
            lambda: list_workspaces(project, archived=archived, chats=True)
        )

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
                if elsewhere:
                    # Our idle session's view of the log goes stale while another process
                    # writes it: it reopens, from the log, for the next message.
                    await self.hosts.mark_stale(ws.id)
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

    # Creating ----------------------------------------------------------------------------

    async def create(self, directory: Path, runtime: str, **fields: Any) -> Workspace:
        """A new workspace (its runtime and init hook are kept by the host for its first
        turn); the init hook's output goes to its transcript. `share_credentials`: a Docker
        workspace's "Share credentials" (kept on the record, as the server's create route does)."""
        if fields.pop("share_credentials", False):
            fields["extra"] = {"container_credentials": True}
        record = await self.hosts.create(directory, runtime, **fields)
        return self._adopt(record, empty=True)

    async def container_engine(self) -> EngineInfo:
        """This machine's container engine: the dialog offers Docker only when it answers."""
        from xum.runtime.container_engine import probe_engine

        return await asyncio.to_thread(probe_engine)

    async def devcontainer_configs(self, directory: Path) -> list[DevcontainerConfig]:
        """The project's devcontainer.json files: the dialog offers Dev Container only when
        there is one."""
        from xum.workspaces.devcontainer_configs import find_configs

        return await asyncio.to_thread(find_configs, directory)

    async def external_agents(self) -> list[tuple[str, str]]:
        """(name, label) of config.json's external ACP agents: the dialog's agent choice."""
        from xum.store.config import read_config
        from xum.workspaces.external.definitions import external_agents

        found = await asyncio.to_thread(lambda: external_agents(read_config()))
        return [(d.name, d.display) for d in sorted(found.values(), key=lambda d: d.name)]

    async def create_scratch(self, **fields: Any) -> Workspace:
        """A new scratch chat (docs/workspaces.md): no project, a private folder."""
        record = await self.hosts.create_scratch(**fields)
        return self._adopt(record, empty=True)

    async def fork(self, source: Workspace, name: str | None) -> Workspace:
        record = await self.hosts.fork(source.id, name, None)
        return self._adopt(record, empty=False)

    def _adopt(self, record: WorkspaceRecord, *, empty: bool) -> Workspace:
        ws = self.track(record)
        ws.loaded = empty  # a new workspace has no history to read; a fork has its source's
        for event in self._early.pop(record.id, []):
            self._emit(ws, event)
        return ws

    # Sending -----------------------------------------------------------------------------

    async def send(
        self, ws: Workspace, text: str, when: When = "step", images: Sequence[ImageUpload] = ()
    ) -> Literal["started", "queued"]:
        """Run `text` (with `images`) as a turn, or queue it when a turn runs. Raises XumError
        when it cannot start (another process holds the session, no provider, an unknown
        model, images while a turn runs)."""
        if not ws.running:
            if ws.record.archived_at is not None:
                raise XumError(
                    "this workspace is archived", hint="unarchive it to continue the chat"
                )
            from xum.store import sessions as session_files

            if session_files.is_busy(ws.id):
                raise await asyncio.to_thread(_busy_error, ws.id)
            await self.load(ws)
            ws.failed, ws.last_sent = False, text
        try:
            outcome = await self.hosts.send(ws.record, text, when, images)
        except XumError as exc:
            if exc is ws.reported:  # the turn failed as it started: its card says so already
                return "started"
            raise
        self.listener.status_changed(ws)
        return outcome

    # Interrupting, Start Here, questions and approvals -----------------------------------

    def interrupt(self, ws: Workspace) -> list[str] | None:
        """Stop the running turn; the messages still queued are handed back. None: no turn ran."""
        host = ws.host
        if host is None or not host.busy:
            return None
        return host.interrupt()

    async def stop_turn(self, ws: Workspace) -> list[str] | None:
        """`interrupt`, for the app (a server's turn is stopped over the network)."""
        return self.interrupt(ws)

    async def start_here(self, ws: Workspace, seq: int) -> None:
        """Make the reply or plan at `seq` the whole context (a boundary frame, instant and
        free; docs/compaction.md). Raises XumError while a turn runs, here or elsewhere."""
        await self.load(ws)
        await self.hosts.start_here(ws.record, seq)
        self.listener.status_changed(ws)

    def decide(self, ws: Workspace, answer: ApprovalAnswer) -> bool:
        """Answer the call waiting for approval."""
        pending = ws.approval
        if pending is None:
            return False
        request_id = pending.request.request_id
        return self.hosts.approvals.answer(ws.id, request_id, answer.decision, answer.reason)

    def answer(self, ws: Workspace, answers: Answers) -> bool:
        """Answer the pending question (None dismisses it)."""
        pending = ws.question
        if pending is None:
            return False
        given = dict(answers) if answers is not None else None
        return self.hosts.questions.answer(ws.id, pending.question_id or "", given)

    # Settings and closing ----------------------------------------------------------------

    async def configure(self, ws: Workspace, **changes: str) -> None:
        """A new model, thinking level or agent: stored, and taken by the open session from
        its next turn on (the session is not reopened)."""
        ws.record = await self.hosts.configure(ws.id, **changes)

    async def release(self, ws: Workspace) -> None:
        """Close the workspace's session (it reopens on the next message)."""
        await self.hosts.close_workspace(ws.id)

    async def close(self, ws: Workspace, wait_s: float = 10.0) -> None:
        """Interrupt a running turn (archive, delete) and release everything of `ws`."""
        await self.hosts.close_workspace(ws.id, wait_s=wait_s)
        if ws.followed is not None:
            ws.followed.close()
            ws.followed = None

    def forget(self, ws: Workspace) -> None:
        self.workspaces.pop(ws.id, None)

    def background_rows(self, workspace_id: str) -> list[dict[str, Any]] | None:
        """The background processes of the workspace's session hosted here (F12); None when
        its session is not open in this process."""
        host = self._hosts.get(workspace_id) if self._hosts is not None else None
        return host.watch.snapshot() if host is not None else None

    async def stop_background(self, workspace_id: str, process_id: str) -> None:
        host = self._hosts.get(workspace_id) if self._hosts is not None else None
        if host is not None:
            await host.watch.stop(process_id)

    async def shutdown(self, wait_s: float = 10.0) -> None:
        """Stop every turn (each ends durably, as interrupted) and release every session."""
        if self._hosts is not None:
            await self._hosts.shutdown(wait_s)
        for ws in self.workspaces.values():
            if ws.followed is not None:
                ws.followed.close()
                ws.followed = None

    # HostListener ------------------------------------------------------------------------

    async def opening(self, workspace_id: str) -> None:
        ws = self.workspaces.get(workspace_id)
        if ws is not None:
            await self.load(ws)

    def event(self, workspace_id: str, event: E.Event) -> None:
        """An engine event of a workspace (or of one of its sub-agents, under its own id)."""
        ws = self.workspaces.get(workspace_id)
        if ws is not None:
            self._emit(ws, event)
        elif isinstance(event, E.InitOutput | E.InitEnd):
            kept = self._early.setdefault(workspace_id, [])
            if len(kept) < INIT_KEEP:
                kept.append(event)

    def status_changed(self, workspace_id: str) -> None:
        ws = self.workspaces.get(workspace_id)
        if ws is None:
            return
        self._show_approval(ws, self.hosts.approvals.requests_for(workspace_id))
        self.listener.status_changed(ws)

    def _show_approval(self, ws: Workspace, waiting: Sequence[E.ApprovalRequest]) -> None:
        """The first request waiting is the one on screen (kept while it still waits)."""
        current = ws.approval
        if not waiting:
            ws.approval = None
        elif current is None or current.request not in waiting:
            ws.approval = PendingApproval(waiting[0])

    def turn_failed(self, workspace_id: str, error: Exception) -> None:
        ws = self.workspaces.get(workspace_id)
        if ws is None:
            return
        ws.reported = error
        if isinstance(error, XumError):
            self._report(ws, error.code, error.message, error.hint)
        else:  # a bug (logged by the host): keep the UI up and say so
            message = f"the turn failed: {type(error).__name__}: {error}"
            self._report(ws, "internal_error", message, None)
        self.listener.status_changed(ws)

    def question_opened(self, pending: host_pending.PendingQuestion) -> None:
        ws = self.workspaces.get(pending.workspace_id)
        if ws is not None:
            ws.question = PendingQuestion(list(pending.questions), question_id=pending.id)
            self.listener.status_changed(ws)

    def question_closed(self, pending: host_pending.PendingQuestion) -> None:
        ws = self.workspaces.get(pending.workspace_id)
        if ws is not None and ws.question is not None and ws.question.question_id == pending.id:
            ws.question = None
            self.listener.status_changed(ws)

    def workspaces_changed(self) -> None:
        return None  # the app reloads its list itself after what it does

    # Folding -----------------------------------------------------------------------------

    def _report(self, ws: Workspace, code: str, message: str, hint: str | None) -> None:
        ws.failed = True
        changes = ws.transcript.error(code, message, hint, ws.last_sent or None)
        self.listener.transcript_changed(ws, changes)

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
        elif isinstance(event, E.GovernorWait | E.GovernorWaitEnd) and not changes:
            self.listener.transcript_changed(ws, [])  # the status line says why it waits


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


def _busy_error(workspace_id: str) -> SessionBusyError:
    """Why a message cannot go to a session another process holds, and what to do."""
    from xum.host.server_target import find_server
    from xum.store import sessions as session_files

    holder = session_files.lock_holder(workspace_id) or {}
    server = find_server()
    if server is not None and holder.get("pid") == server.pid:
        return SessionBusyError(
            "xum server is running a turn in this workspace",
            hint="quit and start `xum tui` again: it attaches to the running server and steers "
            "its turns (or use the browser)",
        )
    who = str(holder.get("purpose") or "another process")
    return SessionBusyError(
        f"{who} is using this workspace's session right now",
        hint="wait for its turn to end (it shows here as it goes), then send again",
    )
