"""The terminal UI attached to a running `xum server` (`xum tui --server-url`, or the server
this `$XUM_ROOT`'s `server.lock` names).

The server hosts every session; `AttachedRunner` is the same view as `Runner` (records,
transcripts, statuses, the question and approval on screen), over `xum.host.remote.RemoteHosts`
instead of an in-process `Hosts`. A workspace's transcript is its history from the server, then
its WebSocket stream: the committed events after the last seq, the reply streaming now, then
live deltas, so the server's turns show token by token; after a dropped connection the client
resumes from the last seq it received. Sending, interrupting, Start Here, settings, answers and
approval decisions are the server's REST calls. Quitting the UI leaves the server's turns
running (they belong to the server, as the browser's do).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from xum.core.errors import XumError
from xum.core.images import ImageUpload
from xum.engine import events as E
from xum.host.remote import RemoteHosts
from xum.host.remote_wire import RESUMED
from xum.tui.runner import Answers, Listener, Runner, When, Workspace
from xum.tui.transcript import Change

if TYPE_CHECKING:
    from xum.host.hosts import Hosts
    from xum.host.server_target import ServerTarget
    from xum.runtime.container_engine import EngineInfo
    from xum.store.registry import WorkspaceRecord
    from xum.workspaces.devcontainer_configs import DevcontainerConfig
    from xum.workspaces.safety.approvals import ApprovalAnswer


log = logging.getLogger("xum.tui")


class AttachedRunner(Runner):
    attached = True

    def __init__(
        self,
        listener: Listener,
        target: ServerTarget,
        on_list_changed: Callable[[], Awaitable[None]],
    ) -> None:
        super().__init__(listener)
        self.remote = RemoteHosts(target, self)
        self.remote.on_notice = self._notice  # the server's notifications (docs/notifications.md)
        self.remote.inbox.following = True  # Ctrl+L and Ctrl+F show the server's inbox
        self._on_list_changed = on_list_changed
        self._list_stale = False  # a change the list was not re-read for yet
        self._listing = False
        # Answered here, not yet confirmed by the server: not shown again meanwhile.
        self._answered: set[str] = set()

    @property
    def hosts(self) -> Hosts:
        # Nothing runs in this process while attached: a path that still reached for the local
        # host would run a second session beside the server's.
        raise XumError(
            "this does not work while the terminal UI is attached to a server",
            hint="use the browser for it, or start `xum tui` without a running server",
        )

    def connect(self) -> None:
        """Open the server's WebSocket: every workspace's status, then live."""
        self.remote.connect()

    def _workspace(self, record: WorkspaceRecord) -> Workspace:
        return Workspace(record, remote=self.remote)

    async def list_records(
        self, project_root: Path, *, archived: bool = False
    ) -> list[WorkspaceRecord]:
        project = str(project_root)
        if archived:
            return await self.remote.archived(project)
        # One read of every workspace: the project's, and the scratch chats, which belong to no
        # project (docs/workspaces.md); newest first, as the server lists them.
        listed = await self.remote.list_workspaces()
        return [r for r in listed if r.project_path == project or r.extra.get("scratch")]

    async def load(self, ws: Workspace) -> None:
        """The workspace's history from the server, then its stream (what was committed since,
        the reply streaming now, then live events); once."""
        if ws.loaded or ws.loading is not None:
            return
        ws.loading = []
        events: list[E.Event] = []
        problem: XumError | None = None
        try:
            events = await self.remote.history(ws.id)
            after = max((e.seq or 0 for e in events if isinstance(e, E.Committed)), default=0)
            await self.remote.subscribe(ws.id, after_seq=after)
        except XumError as exc:
            problem = exc
        finally:
            waiting, ws.loading = ws.loading or [], None
            ws.loaded = True
        changes = []
        for event in [*events, *waiting]:
            changes.extend(_fold(ws, event))  # what both have is folded once (seq)
        if changes:
            self.listener.transcript_changed(ws, changes)
        if problem is not None:
            self._report(ws, problem.code, problem.message, problem.hint)
        self._sync_waiting(ws)

    async def poll_external(self, workspaces: list[Workspace]) -> None:
        return None  # the server streams what happens; no log is followed

    # What the user does ------------------------------------------------------------------

    async def create(self, directory: Path, runtime: str, **fields: Any) -> Workspace:
        fields.pop("name_hint", None)  # the server names a workspace from its title
        permissions = fields.pop("permissions", None)
        kind, _, host = runtime.partition(" ")  # "ssh <host>", as the dialog gives it
        if host:
            fields["host"] = host
        record = await self.remote.create(str(directory), kind, **fields)  # share_credentials too
        if permissions is not None:
            record = await self.remote.change_settings(record.id, permissions=permissions)
        return await self._opened(record)

    async def container_engine(self) -> EngineInfo:
        """The server's container engine: the server makes the workspaces."""
        from xum.runtime.container_engine import EngineInfo

        data = await self.remote.server_info("container-engine")
        found = [data.get(k) for k in ("cli", "version", "problem")]
        return EngineInfo(bool(data.get("available")), *found)

    async def devcontainer_configs(self, directory: Path) -> list[DevcontainerConfig]:
        """The project's configs as the server finds them (`GET /api/projects/devcontainers`):
        the server makes the workspace from its own copy of the project."""
        return await self.remote.devcontainer_configs(str(directory))

    async def external_agents(self) -> list[tuple[str, str]]:
        """The server's external agents (`GET /api/external-agents`): it runs them."""
        return await self.remote.external_agents()

    async def create_scratch(self, **fields: Any) -> Workspace:
        permissions = fields.pop("permissions", None)
        record = await self.remote.create_scratch(**fields)
        if permissions is not None:
            record = await self.remote.change_settings(record.id, permissions=permissions)
        return await self._opened(record)

    async def fork(self, source: Workspace, name: str | None) -> Workspace:
        return await self._opened(await self.remote.fork(source.id, name, None))

    async def _opened(self, record: WorkspaceRecord) -> Workspace:
        ws = self.track(record)
        await self.load(ws)  # subscribed from its start: the init hook's output comes too
        return ws

    async def send(
        self, ws: Workspace, text: str, when: When = "step", images: Sequence[ImageUpload] = ()
    ) -> Literal["started", "queued"]:
        if ws.record.archived_at is not None:
            raise XumError("this workspace is archived", hint="unarchive it to continue the chat")
        await self.load(ws)
        if not ws.running:
            ws.failed, ws.last_sent = False, text
        sent = await self.remote.send_message(ws.id, text, when, images)
        if sent.record is not None:
            ws.record = sent.record
        self.listener.status_changed(ws)
        return "started" if sent.disposition == "started" else "queued"

    async def stop_turn(self, ws: Workspace) -> list[str] | None:
        interrupted, unsent = await self.remote.interrupt(ws.id)
        return unsent if interrupted or unsent else None

    def interrupt(self, ws: Workspace) -> list[str] | None:
        return None  # the server's turn: `stop_turn`

    async def start_here(self, ws: Workspace, seq: int) -> None:
        await self.load(ws)
        await self.remote.start_here(ws.id, seq)
        self.listener.status_changed(ws)

    def decide(self, ws: Workspace, answer: ApprovalAnswer) -> bool:
        pending = ws.approval
        if pending is None:
            return False
        request_id = pending.request.request_id
        self._answered.add(request_id)
        ws.approval = None  # the server's `approval-resolved` confirms it
        decision, reason = answer.decision, answer.reason
        call = self.remote.answer_approval(ws.id, request_id, decision, reason)
        self.spawn(self._call(ws, request_id, call))
        self.listener.status_changed(ws)
        return True

    def answer(self, ws: Workspace, answers: Answers) -> bool:
        pending = ws.question
        if pending is None or pending.question_id is None:
            return False
        given = dict(answers) if answers is not None else None
        self._answered.add(pending.question_id)
        ws.question = None  # the server's `question-closed` confirms it
        call = self.remote.answer_question(ws.id, pending.question_id, given)
        self.spawn(self._call(ws, pending.question_id, call))
        self.listener.status_changed(ws)
        return True

    async def _call(self, ws: Workspace, key: str, call: Coroutine[Any, Any, bool]) -> None:
        """An answer to the server: one it no longer waits for (answered in the browser, the
        turn stopped) is fine; one that did not reach it is said in the transcript, and what
        still waits shows again to be answered once more."""
        try:
            await call
        except XumError as exc:
            self._answered.discard(key)
            self._report(ws, exc.code, exc.message, exc.hint)
        self._sync_waiting(ws)
        self.listener.status_changed(ws)

    async def configure(self, ws: Workspace, **changes: str) -> None:
        ws.record = await self.remote.change_settings(ws.id, **changes)

    async def release(self, ws: Workspace) -> None:
        return None  # the server holds the session; its routes release it themselves

    async def close(self, ws: Workspace, wait_s: float = 10.0) -> None:
        if ws.loaded:
            await self.remote.unsubscribe(ws.id)

    async def shutdown(self, wait_s: float = 10.0) -> None:
        """Hang up: the server's turns go on (the browser, or the UI started again, shows
        them)."""
        await self.remote.aclose()

    # HostListener (the server's stream) ---------------------------------------------------

    def _emit(self, ws: Workspace, event: E.Event) -> None:
        if event is RESUMED:
            if ws.loading is not None:
                ws.loading.append(event)
            elif ws.loaded:
                changes = ws.transcript.restream()
                if changes:
                    self.listener.transcript_changed(ws, changes)
            return
        super()._emit(ws, event)

    def event(self, workspace_id: str, event: E.Event) -> None:
        super().event(workspace_id, event)
        if isinstance(event, E.ApprovalRequest | E.ApprovalResolved | E.TurnEnd):
            ws = self.workspaces.get(workspace_id)
            if ws is not None:
                self._sync_waiting(ws)
                self.listener.status_changed(ws)

    def status_changed(self, workspace_id: str) -> None:
        ws = self.workspaces.get(workspace_id)
        if ws is None:
            return
        status = self.remote.status(workspace_id) or {}
        ws.busy_elsewhere = bool(status.get("busyElsewhere"))
        if not ws.loaded:  # its events are not streamed here: the server's word for its dot
            ws.failed = status.get("state") == "error"
        self._sync_waiting(ws)
        self.listener.status_changed(ws)
        if status.get("unread") and self.on_screen(workspace_id):
            # A turn that ended while it was on screen is read, as the browser marks it.
            self.spawn(self._read(workspace_id, int(status.get("lastSeq") or 0)))

    def mark_read(self, ws: Workspace) -> None:
        """The workspace is on screen: the server's notices for it leave."""
        status = self.remote.status(ws.id) or {}
        if status.get("unread"):
            self.spawn(self._read(ws.id, int(status.get("lastSeq") or 0)))

    async def _read(self, workspace_id: str, seq: int) -> None:
        try:
            await self.remote.mark_read(workspace_id, seq)
        except XumError as exc:  # a workspace deleted meanwhile, a server gone: nothing to mark
            log.debug("could not mark %s read: %s", workspace_id, exc.message)

    def workspaces_changed(self) -> None:
        # Changes that come while the list is read are read once more after it, not each.
        self._list_stale = True
        if not self._listing:
            self._listing = True
            self.spawn(self._relist())

    async def _relist(self) -> None:
        try:
            while self._list_stale:
                self._list_stale = False
                await self._on_list_changed()
        finally:
            self._listing = False

    def _sync_waiting(self, ws: Workspace) -> None:
        """The approval request and question on screen: what the server says waits now."""
        waiting = self.remote.approval_requests(ws.id)
        self._show_approval(ws, [r for r in waiting if r.request_id not in self._answered])
        pending = self.remote.pending_question(ws.id)
        if pending is not None and (pending.settled or pending.id in self._answered):
            pending = None
        if ws.question is not None and (pending is None or pending.id != ws.question.question_id):
            ws.question = None
        if ws.question is None and pending is not None:
            self.question_opened(pending)


def _fold(ws: Workspace, event: E.Event) -> list[Change]:
    """A resumed snapshot's reply so far replaces what streamed, without a restart notice."""
    return ws.transcript.restream() if event is RESUMED else ws.transcript.fold(event)
