"""`Hosts`: the workspace hosts of one process, for whichever front-end runs in it.

It keeps one `WorkspaceHost` per active workspace and one lock per workspace (a send, an idle
compaction, a rename or a delete of the same workspace never interleave): a message to an idle
workspace opens its host (through the one assembly) and starts a turn; one to a busy host is
queued in its session. It also keeps what every workspace of the process shares: the questions
and approvals waiting for a person (`xum.host.pending`), a workspace created here whose runtime
and init hook wait for its first turn, idle close (a host without a turn for `idle_close_s`, and
with no sub-agent working, is closed), the idle compaction sweep (`xum.host.idlecompact`) and
shutdown.

Everything runs on one event loop (the server's: see `xum.server.app` for why one loop serves
every workspace); what blocks the loop blocks every workspace, so slow steps go to threads.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from xum.core.errors import SessionBusyError, UsageError, XumError
from xum.core.images import ImageUpload, check_count
from xum.engine import events as E
from xum.host.governor import Governor
from xum.host.inbox import Inbox
from xum.host.inbox_feed import InboxFeed
from xum.host.listener import HostListener
from xum.host.notifications import Notifier
from xum.host.pending import Approvals, Questions
from xum.host.workspace_host import (
    HostOptions,
    HostServices,
    OpenSettings,
    When,
    WorkspaceHost,
)
from xum.store import registry
from xum.store import sessions as session_files
from xum.store.blobs import SessionBlobs
from xum.store.registry import WorkspaceRecord

if TYPE_CHECKING:
    from xum.workspaces.lifecycle import CreatedWorkspace

log = logging.getLogger("xum.host")

START_WAIT_S = 10.0  # how long a send waits to see its turn start (or fail to)
PREPARED_KEEP_S = 1800.0  # a new workspace's runtime (and init hook) kept for its first turn
SETTINGS_FIELDS = frozenset({"model", "thinking", "agent"})


def _update_record(
    workspace_id: str, changes: dict[str, Any], settings: list[str]
) -> WorkspaceRecord:
    """Store `changes`; engine `settings` are refused first where an external agent is the
    workspace's agent (it has its own model and loop)."""
    if settings:
        from xum.workspaces.external.definitions import refuse_engine_settings

        current = registry.get_workspace(workspace_id)
        refuse_engine_settings(current.external_agent if current else None, settings)
    return registry.update_workspace(workspace_id, **changes)


class TurnRunningError(XumError):
    """The action needs the workspace idle, and a turn runs in it."""

    code = "conflict"


@dataclass
class Prepared:
    """A workspace just created: its runtime and init hook, kept for the first turn."""

    created: CreatedWorkspace
    since: float = field(default_factory=time.monotonic)


class Hosts:
    def __init__(
        self,
        listener: HostListener,
        *,
        options: HostOptions | None = None,
        governor: Governor | None = None,
        questions: Questions | None = None,
        approvals: Approvals | None = None,
        idle_close_s: float = 600.0,
        idle_check_s: float = 3600.0,
        read_seq: Callable[[str], int] | None = None,
    ) -> None:
        self.idle_close_s = idle_close_s
        self.idle_check_s = idle_check_s  # how often idle compaction looks for work
        self._idle_checked = time.monotonic()
        self.hosts: dict[str, WorkspaceHost] = {}
        self.prepared: dict[str, Prepared] = {}
        self.questions = questions or Questions(listener)
        self.approvals = approvals or Approvals(listener)
        # The attention inbox is fed from every listener call (`xum.host.inbox_feed`): the
        # host's own, and those of the pending maps (a front-end may have made them with a
        # listener of its own, as the server does), so no front-end feeds it by hand.
        self.inbox = Inbox(self.questions, self.approvals, read_seq=read_seq or (lambda _ws: 0))
        # Desktop notifications, decided once for every front-end (`xum.host.notifications`).
        self.notifier = Notifier(self.inbox)
        self.listener: HostListener = InboxFeed(listener, self.inbox, self._driving, self.notifier)
        for pending in (self.questions, self.approvals):
            pending.listener = InboxFeed(pending.listener, self.inbox, self._driving)
        listener = self.listener
        self._locks: dict[str, asyncio.Lock] = {}
        self._background: set[asyncio.Task[Any]] = set()
        # One governor for every session of the process (config.json `governor`).
        self.governor = governor or Governor.from_config()
        self.services = HostServices(
            listener,
            self.questions,
            self.approvals,
            self._spawn,
            options or HostOptions(),
            self.governor,
        )

    # Reading ----------------------------------------------------------------------------

    def get(self, workspace_id: str) -> WorkspaceHost | None:
        return self.hosts.get(workspace_id)

    def lock_for(self, workspace_id: str) -> asyncio.Lock:
        return self._locks.setdefault(workspace_id, asyncio.Lock())

    def is_running(self, workspace_id: str) -> bool:
        host = self.hosts.get(workspace_id)
        return host is not None and host.busy

    def is_driving(self, workspace_id: str) -> bool:
        """A drive runs here (a turn, or the step between queued ones)."""
        host = self.hosts.get(workspace_id)
        return host is not None and host.driving

    def _driving(self, workspace_id: str) -> bool | None:
        """Whether a drive runs in the workspace; None when no host of this process has it."""
        host = self.hosts.get(workspace_id)
        return host.driving if host is not None else None

    def queued(self, workspace_id: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        host = self.hosts.get(workspace_id)
        return host.queued() if host is not None else ((), ())

    # Creating workspaces ----------------------------------------------------------------

    async def create(self, directory: Path, runtime: str, **fields: Any) -> WorkspaceRecord:
        """`lifecycle.create_workspace`; its runtime and init hook are kept for the first turn."""
        from xum.workspaces.lifecycle import create_workspace

        return await self._adopt(lambda: create_workspace(directory, runtime, **fields))

    async def create_scratch(self, **fields: Any) -> WorkspaceRecord:
        """`lifecycle.create_scratch_chat`: a workspace with no project (docs/workspaces.md)."""
        from xum.workspaces.lifecycle import create_scratch_chat

        return await self._adopt(lambda: create_scratch_chat(**fields))

    async def fork(self, workspace_id: str, name: str | None, title: str | None) -> WorkspaceRecord:
        from xum.workspaces.lifecycle import fork_workspace

        record = await self._adopt(lambda: fork_workspace(workspace_id, name, title=title))
        self.listener.workspaces_changed()
        return record

    async def _adopt(
        self, make: Callable[[], Coroutine[Any, Any, CreatedWorkspace]]
    ) -> WorkspaceRecord:
        created = await make()
        record = created.record
        init = created.init
        if init is not None:
            listener = self.listener
            # Its output so far, then each line, to whoever watches the workspace; then its end.
            init.subscribe(lambda line: _quiet(listener.event, record.id, E.InitOutput(line=line)))

            async def announce() -> None:
                status = await init.wait()
                listener.event(record.id, E.InitEnd(status=status, exit_code=init.exit_code))
                listener.workspaces_changed()

            self._spawn(announce())
        self.prepared[record.id] = Prepared(created)
        assert isinstance(record, WorkspaceRecord)
        return record

    # Sending ----------------------------------------------------------------------------

    async def send(
        self,
        record: WorkspaceRecord,
        text: str,
        when: When = "step",
        images: Sequence[ImageUpload] = (),
    ) -> Literal["started", "queued"]:
        """Start a turn of `text` in an idle workspace (opening its host), or queue it in a
        busy one. Raises what keeps the turn from starting (a configuration problem, an
        unusable slash command, `SessionBusyError` when another process drives the session,
        an image that is refused). `images` are stored in the session's blobs first and go
        with the message; a message with images is not queued into a running turn."""
        async with self.lock_for(record.id):
            host = self.hosts.get(record.id)
            if images:
                if host is not None and host.busy:
                    raise UsageError(
                        "images can only be sent while the agent is idle",
                        hint="wait for the turn to end (or stop it), then send them again",
                    )
                check_count(len(images))
                blobs = SessionBlobs(record.id)
                # Written durably (fsync) off the event loop, before the frame that names them.
                refs = await asyncio.to_thread(
                    lambda: [blobs.put(image.data, image.name) for image in images]
                )
            else:
                refs = []
            if host is not None and host.busy:
                host.queue(text, when)
                return "queued"
            if session_files.is_busy(record.id):
                raise SessionBusyError(
                    "another process (such as `xum run`) is using this workspace's session",
                    hint="wait for it to finish, then send again",
                )
            if host is None:
                host = await self._open(record)
            host.start(text, images=refs)
        await host.wait_started(START_WAIT_S)
        return "started"

    async def start_here(self, record: WorkspaceRecord, seq: int) -> int:
        """Restart the workspace's context from the reply or plan at `seq` (a boundary frame,
        instant); returns the boundary's seq. `TurnRunningError` while a turn runs."""
        async with self.lock_for(record.id):
            host = self.hosts.get(record.id)
            if (host is not None and host.busy) or session_files.is_busy(record.id):
                raise TurnRunningError(
                    "a turn is running in this workspace", hint="use Start Here once it has ended"
                )
            if host is None:
                host = await self._open(record)
            return await host.start_here(seq)

    async def interrupt(self, workspace_id: str) -> tuple[bool, list[str]]:
        """Stop the running turn; the messages still queued are handed back, not run."""
        host = self.hosts.get(workspace_id)
        if host is None or not host.busy:
            return False, []
        return True, host.interrupt()

    async def clear_queue(self, workspace_id: str) -> list[str]:
        host = self.hosts.get(workspace_id)
        if host is None:
            return []
        unsent = host.take_queue()
        self.listener.status_changed(workspace_id)
        return unsent

    # Settings ---------------------------------------------------------------------------

    async def change_settings(self, workspace_id: str, **changes: Any) -> WorkspaceRecord:
        """Store checked changes of the workspace's record; a new model, thinking level or
        agent takes effect from the next turn, in the open session where it can take it."""
        settings = {k: v for k, v in changes.items() if k in SETTINGS_FIELDS}
        record = await asyncio.to_thread(_update_record, workspace_id, changes, sorted(settings))
        if settings:
            await self._switch(workspace_id, record, settings)
        self.listener.workspaces_changed()
        return record

    async def configure(
        self,
        workspace_id: str,
        *,
        model: str | None = None,
        thinking: str | None = None,
        agent: str | None = None,
    ) -> WorkspaceRecord:
        """Store a new model, thinking level or agent (None: unchanged; checked by the caller)
        and switch the open session to it for its next turn (`_switch`)."""
        given = {"model": model, "thinking": thinking, "agent": agent}
        changes = {k: v for k, v in given.items() if v is not None}
        return await self.change_settings(workspace_id, **changes)

    async def _switch(
        self, workspace_id: str, record: WorkspaceRecord, settings: dict[str, Any]
    ) -> None:
        """Hand the new settings to the open session without reopening it
        (`WorkspaceHost.configure`; a running turn keeps what it started with). What the session
        cannot take (a route that cannot be resolved, an agent reset to the default) marks the
        host stale instead: the next turn reopens with the record and says what is wrong."""
        host = self.hosts.get(workspace_id)
        if host is None or host.parts is None or host.stale:
            return
        if "agent" in settings and settings["agent"] is None:
            await self.mark_stale(workspace_id)
            return
        try:
            await host.configure(
                record,
                route="model" in settings,
                thinking="model" in settings or "thinking" in settings,
                agent=settings.get("agent"),
            )
        except XumError:
            await self.mark_stale(workspace_id)
        self.listener.status_changed(workspace_id)

    async def mark_stale(self, workspace_id: str) -> None:
        """The workspace's model, thinking, agent or providers changed: reopen the session
        before its next turn."""
        host = self.hosts.get(workspace_id)
        if host is None:
            return
        if host.busy or host.session.has_active_children():
            host.stale = True
        else:
            self._close_soon(host)

    async def mark_all_stale(self) -> None:
        """Providers or defaults changed: every open host reopens before its next turn."""
        for ws in list(self.hosts):
            await self.mark_stale(ws)

    # Opening ----------------------------------------------------------------------------

    async def open(
        self,
        record: WorkspaceRecord,
        *,
        created: CreatedWorkspace | None = None,
        settings: OpenSettings | None = None,
    ) -> WorkspaceHost:
        """The workspace's host, opened now if it is not (a front-end that shows a session
        before its first message: an editor's `session/new` and `session/load`; `xum run`,
        which sets a goal before its message). Opening takes no writer lock: each turn takes
        it. `created`: the runtime and init hook of a workspace the caller just made;
        `settings`: the front-end's own in place of the record's (`xum run`'s flags)."""
        async with self.lock_for(record.id):
            host = self.hosts.get(record.id)
            if host is None:
                if created is not None:
                    self.prepared[record.id] = Prepared(created)
                host = await self._open(record, settings)
            return host

    async def _open(
        self, record: WorkspaceRecord, settings: OpenSettings | None = None
    ) -> WorkspaceHost:
        await self.listener.opening(record.id)
        host = WorkspaceHost(record.id, self.services)
        host.on_drive_end = self._drive_ended
        host.on_wake = self._wake_soon

        def take_created() -> CreatedWorkspace | None:
            prepared = self.prepared.pop(record.id, None)
            return prepared.created if prepared is not None else None

        await host.open(record, take_created, settings)
        self.hosts[record.id] = host
        return host

    def _drive_ended(self, host: WorkspaceHost) -> None:
        if host.stale and self.hosts.get(host.workspace_id) is host:
            self._spawn(self.mark_stale(host.workspace_id))

    def _wake_soon(self, host: WorkspaceHost) -> None:
        self._spawn(self._deliver_wakes(host))

    async def _deliver_wakes(self, host: WorkspaceHost) -> None:
        """An idle host's background wake-ups as a drive of their own (xum.host.background);
        under the workspace's lock, like a message."""
        async with self.lock_for(host.workspace_id):
            if self.hosts.get(host.workspace_id) is not host or host.driving:
                return  # closed meanwhile, or a drive started that delivers them
            if not host.watch.pending:
                return
            if session_files.is_busy(host.workspace_id):
                # Another process drives the session: the notices wait for this host's next turn.
                log.info("background wake-up of %s waits: the session is busy", host.workspace_id)
                return
            host.start(None)

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        task.add_done_callback(lambda t: t.exception() if not t.cancelled() else None)

    # Idle compaction (xum.host.idlecompact) ---------------------------------------------

    async def maybe_compact_idle(self) -> None:
        """From the maintenance loop: look for idle workspaces once per `idle_check_s`."""
        if time.monotonic() - self._idle_checked < self.idle_check_s:
            return
        self._idle_checked = time.monotonic()
        from xum.host.idlecompact import compact_idle

        await compact_idle(self)

    async def start_idle_compaction(self, record: WorkspaceRecord) -> bool:
        """Compact `record`'s session as an idle compaction, unless a turn runs in it."""
        async with self.lock_for(record.id):
            host = self.hosts.get(record.id)
            if (host is not None and host.busy) or session_files.is_busy(record.id):
                return False
            if host is None:
                host = await self._open(record)
            host.start(None, idle=True)
        return True

    # Closing ----------------------------------------------------------------------------

    def _close_soon(self, host: WorkspaceHost) -> None:
        self.hosts.pop(host.workspace_id, None)
        self._spawn(host.aclose())

    async def close_idle(self) -> None:
        """From the maintenance loop: close hosts idle longer than `idle_close_s` and drop a
        created workspace's runtime its first turn never came for."""
        now = time.monotonic()
        for host in list(self.hosts.values()):
            if (
                not host.busy
                and now - host.last_active > self.idle_close_s
                and not host.session.has_active_children()
                and not host.watch.running()  # closing would kill its background processes
                and self.hosts.get(host.workspace_id) is host
            ):
                self._close_soon(host)
        for ws, prepared in list(self.prepared.items()):
            init = prepared.created.init
            init_running = init is not None and not init.done
            if not init_running and now - prepared.since > PREPARED_KEEP_S:
                del self.prepared[ws]
                self._spawn(_drop_prepared(prepared))

    async def close_workspace(self, workspace_id: str, *, wait_s: float = 10.0) -> None:
        """Interrupt a running turn (archive, rename, delete) and release the session."""
        prepared = self.prepared.pop(workspace_id, None)
        if prepared is not None:
            await _drop_prepared(prepared)
        host = self.hosts.get(workspace_id)
        if host is None:
            return
        await host.stop(wait_s)
        self.hosts.pop(workspace_id, None)
        await host.aclose()

    async def shutdown(self, wait_s: float = 10.0) -> None:
        """Stop every turn (each ends durably, as interrupted) and release every session."""
        hosts = list(self.hosts.values())
        for host in hosts:
            host.interrupt()  # hands back the queue; a turn held for the budget just ends
        tasks = [h.task for h in hosts if h.task is not None and not h.task.done()]
        if tasks:
            _done, pending = await asyncio.wait(tasks, timeout=wait_s)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending, timeout=2.0)
        for host in hosts:
            self.hosts.pop(host.workspace_id, None)
            await host.aclose()
        for ws in list(self.prepared):
            await self.close_workspace(ws)
        for task in list(self._background):
            task.cancel()
        await self.governor.aclose()


async def _drop_prepared(prepared: Prepared) -> None:
    created = prepared.created
    if created.init is not None:
        with contextlib.suppress(Exception):
            created.init.cancel()
    with contextlib.suppress(Exception):
        await created.runtime.close()


def _quiet(fn: Callable[..., None], *args: Any) -> None:
    try:
        fn(*args)
    except Exception:
        log.exception("a front-end failed to take a host event")
