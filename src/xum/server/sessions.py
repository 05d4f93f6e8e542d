"""Agent sessions inside the server: one `AgentSession` per active workspace, all on the
server's event loop.

Why one loop: the slow parts of a turn are kept off it (the engine appends most durable frames on
its log thread pool, tools and hooks are asyncio subprocesses, file reads go to threads; here the
writer lock is taken on a thread and the partial message is written on one, see
`xum.store.writerlog`), so a turn mostly waits, and what it computes is short. Sharing the loop makes an event's way to
the browsers a plain function call: the engine's emit folds the event into the hub and queues
its JSON for each subscriber, and the WebSocket writers send it on the same loop. One event-loop
thread per session was measured (bench/bench_server.py, 50 workspaces streaming at once) to cost
about 40% more server CPU, in GIL hand-offs and cross-thread wake-ups, with p99 latencies of
10-100 ms where one loop gives 4-7 ms. What blocks the loop now blocks every workspace: keep it
short (move a slow step to `asyncio.to_thread` or the log's pool). The hub reads each log through
its own read-only `SessionLog`, as another process would.

A session is opened when a message is sent to an idle workspace, through the one assembly every
front-end uses (`xum.workspaces.assembly`: project secrets, hooks and masking for trusted
projects, sub-agents, the init hook of a new workspace), and closed after `idle_close_s` without
a turn (a session whose sub-agents are still working stays). Turns go on when every browser is
gone. When something outside xum edits an open session's log, its writer refuses the next turn
(`session_changed`); the manager then opens the session again from the log as it is and runs
the turn on that (`_reopen`).

Messages sent while a turn runs are queued in the engine (`AgentSession.queue_message`): "step"
ones are delivered when the running tool calls finish; "turn" ones run as new turns, one after
another, when the turn ends (`next_queued`). A turn that ends early (error, budget, step limit)
leaves its undelivered "step" messages to run next too; an interrupt hands every queued message
back to the caller instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from xum.core.errors import SessionChangedError, XumError
from xum.engine import events as E
from xum.server.approvals import Approvals
from xum.server.errors import ApiError, from_xum_error, not_found
from xum.server.hub import Channel, Hub
from xum.server.questions import Questions
from xum.store import registry
from xum.store import sessions as session_files
from xum.store.registry import WorkspaceRecord
from xum.store.sessionlog import check_workspace_id
from xum.workspaces.safety.choice import SafetyChoice

if TYPE_CHECKING:
    from xum.engine.goals import Decision
    from xum.engine.route import ModelRoute
    from xum.engine.turn import TurnResult
    from xum.llm.types import ThinkingLevel
    from xum.workspaces.assembly import WorkspaceSession
    from xum.workspaces.lifecycle import CreatedWorkspace

log = logging.getLogger("xum.server")

When = Literal["step", "turn"]
START_WAIT_S = 10.0  # how long a send waits to see its turn start (or fail to)
PREPARED_KEEP_S = 1800.0  # a new workspace's runtime (and init hook) kept for its first turn


@dataclass
class Prepared:
    """A workspace just created: its runtime and init hook, kept for the first turn, and what
    creating it learnt about its project."""

    created: CreatedWorkspace
    since: float = field(default_factory=time.monotonic)


@dataclass
class LiveSession:
    workspace_id: str
    parts: WorkspaceSession
    channel: Channel
    task: asyncio.Task[None] | None = None
    last_active: float = field(default_factory=time.monotonic)
    stale: bool = False  # settings changed: close once the current turn ends
    started: asyncio.Event = field(default_factory=asyncio.Event)
    start_error: XumError | None = None

    @property
    def busy(self) -> bool:
        return self.task is not None and not self.task.done()


class SessionManager:
    def __init__(
        self, hub: Hub, *, idle_close_s: float = 600.0, idle_check_s: float = 3600.0
    ) -> None:
        self.hub = hub
        self.idle_close_s = idle_close_s
        self.idle_check_s = idle_check_s  # how often idle compaction looks for work
        self._idle_checked = time.monotonic()
        self.sessions: dict[str, LiveSession] = {}
        self.prepared: dict[str, Prepared] = {}
        self.questions = Questions(hub)
        self.approvals = Approvals(hub)
        self._locks: dict[str, asyncio.Lock] = {}
        self._background: set[asyncio.Task[Any]] = set()
        hub.active = lambda ws: ws in self.sessions
        hub.queued = self._queued

    def _queued(self, workspace_id: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        live = self.sessions.get(workspace_id)
        return live.parts.agent.queue.texts if live is not None else ((), ())

    def lock_for(self, workspace_id: str) -> asyncio.Lock:
        return self._locks.setdefault(workspace_id, asyncio.Lock())

    def _publisher(
        self, workspace_id: str, on_event: Callable[[E.Event], None] | None = None
    ) -> Callable[[E.Event], None]:
        """The session's event sink: each event goes to the hub on the spot (the session runs
        on the server's loop, and the engine emits only there)."""
        publish = _guarded(self.hub.publish)

        if on_event is None:
            return lambda event: publish(workspace_id, event)

        def emit(event: E.Event) -> None:
            on_event(event)
            publish(workspace_id, event)

        return emit

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        task.add_done_callback(lambda t: t.exception() if not t.cancelled() else None)

    # Creating workspaces ----------------------------------------------------------------

    async def create(self, directory: Path, runtime: str, **fields: Any) -> WorkspaceRecord:
        """`lifecycle.create_workspace`; its runtime and init hook are kept for the first turn."""
        from xum.workspaces.lifecycle import create_workspace

        return await self._adopt(lambda: create_workspace(directory, runtime, **fields))

    async def fork(self, workspace_id: str, name: str | None, title: str | None) -> WorkspaceRecord:
        from xum.workspaces.lifecycle import fork_workspace

        return await self._adopt(lambda: fork_workspace(workspace_id, name, title=title))

    async def _adopt(
        self, make: Callable[[], Coroutine[Any, Any, CreatedWorkspace]]
    ) -> WorkspaceRecord:
        created = await make()
        record = created.record
        init = created.init
        if init is not None:
            publish = self._publisher(record.id)
            # Its output so far, then each line, to whoever watches the workspace; then its end.
            init.subscribe(lambda line: publish(E.InitOutput(line=line)))

            async def announce() -> None:
                status = await init.wait()
                self.hub.publish(record.id, E.InitEnd(status=status, exit_code=init.exit_code))
                self.hub.workspaces_changed()

            self._spawn(announce())
        self.prepared[record.id] = Prepared(created)
        assert isinstance(record, WorkspaceRecord)
        return record

    # Sending ----------------------------------------------------------------------------

    async def send(
        self, record: WorkspaceRecord, text: str, when: When = "step"
    ) -> tuple[Literal["started", "queued"], When | None]:
        async with self.lock_for(record.id):
            live = self.sessions.get(record.id)
            if live is not None and live.busy:
                live.last_active = time.monotonic()
                self.questions.dismiss(record.id)  # a chat message instead of an answer
                live.parts.agent.queue_message(text, when)
                self.hub.status_changed(record.id)
                return "queued", when
            if session_files.is_busy(record.id):
                raise ApiError(
                    409,
                    "session_busy",
                    "another process (such as `xum run`) is using this workspace's session",
                    "wait for it to finish, then send again",
                )
            if live is None:
                live = await self._open(record)
            self._start(live, text)
        # Wait until the turn is under way, so a message that cannot start one (an unusable
        # slash command, a session another process grabbed) is a clear error, not a 202.
        waiter = asyncio.ensure_future(live.started.wait())
        assert live.task is not None
        await asyncio.wait({waiter, live.task}, timeout=START_WAIT_S, return_when="FIRST_COMPLETED")
        waiter.cancel()
        if not live.started.is_set() and live.start_error is not None:
            raise from_xum_error(live.start_error)
        return "started", None

    async def start_here(self, record: WorkspaceRecord, seq: int) -> int:
        """Restart the workspace's context from the reply or plan at `seq` (a boundary frame,
        instant); returns the boundary's seq. 409 while a turn runs here or elsewhere."""
        async with self.lock_for(record.id):
            live = self.sessions.get(record.id)
            if (live is not None and live.busy) or session_files.is_busy(record.id):
                raise ApiError(
                    409,
                    "conflict",
                    "a turn is running in this workspace",
                    "use Start Here once it has ended",
                )
            if live is None:
                live = await self._open(record)
            live.last_active = time.monotonic()
            try:
                boundary = await live.parts.agent.compactor.start_here(seq)
            except XumError as exc:
                raise from_xum_error(exc) from None
        self.hub.status_changed(record.id)
        return boundary

    async def interrupt(self, workspace_id: str) -> tuple[bool, list[str]]:
        """Stop the running turn; the messages still queued are handed back, not run."""
        live = self.sessions.get(workspace_id)
        if live is None or not live.busy:
            return False, []
        unsent = self._take_queue(live)
        live.parts.agent.interrupt()
        self.hub.status_changed(workspace_id)
        return True, unsent

    async def clear_queue(self, workspace_id: str) -> list[str]:
        live = self.sessions.get(workspace_id)
        if live is None:
            return []
        unsent = self._take_queue(live)
        self.hub.status_changed(workspace_id)
        return unsent

    def _take_queue(self, live: LiveSession) -> list[str]:
        unsent: list[str] = live.parts.agent.take_queue()
        return unsent

    def is_running(self, workspace_id: str) -> bool:
        live = self.sessions.get(workspace_id)
        return live is not None and live.busy

    async def mark_stale(self, workspace_id: str) -> None:
        """The workspace's model, thinking, agent or providers changed: reopen the session
        before its next turn."""
        live = self.sessions.get(workspace_id)
        if live is None:
            return
        if live.busy or live.parts.has_active_children():
            live.stale = True
        else:
            self._close_soon(live)

    # Opening and running ----------------------------------------------------------------

    async def _open(self, record: WorkspaceRecord) -> LiveSession:
        from xum.workspaces.assembly import route_for

        # Configuration problems (no provider, unknown model) fail here, before a new
        # workspace's prepared runtime is taken.
        route, thinking = await asyncio.to_thread(route_for, record)
        channel = await self.hub.channel(record.id)
        prepared = self.prepared.pop(record.id, None)
        holder: dict[str, LiveSession] = {}
        parts = await self._assemble(record, route, thinking, holder, prepared)
        live = LiveSession(record.id, parts, channel)
        holder["live"] = live
        self.sessions[record.id] = live
        return live

    async def _assemble(
        self,
        record: WorkspaceRecord,
        route: ModelRoute,
        thinking: ThinkingLevel,
        holder: dict[str, LiveSession],
        prepared: Prepared | None,
    ) -> WorkspaceSession:
        """The workspace's session, opened through the one assembly; `holder["live"]` (once
        set) is told when a turn starts."""
        from xum.workspaces.assembly import open_workspace_session

        def on_event(event: E.Event) -> None:
            if isinstance(event, E.TurnStart) and "live" in holder:
                holder["live"].started.set()

        return await open_workspace_session(
            record,
            route=route,
            thinking=thinking,
            emit=self._publisher(record.id, on_event),
            created=prepared.created if prepared is not None else None,
            ask_user=self.questions.asker(record.id),
            # A person answers approvals here (the browser's card); sub-agents cannot ask.
            approver=self.approvals.approver_for(record.id),
            safety=SafetyChoice(approval="ask"),
            children=_guarded(self.hub.publish),  # sub-agents' events
            purpose="server",
            goals=True,  # `_drive` continues goals
        )

    async def _reopen(self, live: LiveSession) -> bool:
        """The session's log changed outside xum (an editor, a script, a restored backup), so
        its writer refuses to append over it: open the session again from what is on disk (the
        scan quarantines what no longer checks out, docs/sessions.md) in place of this one.
        False when it cannot be reopened (the workspace is gone, its model is unusable now)."""
        from xum.workspaces.assembly import route_for

        record = registry.get_workspace(live.workspace_id)
        if record is None:
            return False
        try:
            route, thinking = await asyncio.to_thread(route_for, record)
            parts = await self._assemble(record, route, thinking, {"live": live}, None)
        except XumError:
            log.exception("could not reopen the session of workspace %s", live.workspace_id)
            return False
        old, live.parts = live.parts, parts
        for text in old.agent.take_queue():  # a message queued meanwhile is not lost
            parts.agent.queue_message(text, "turn")
        self._spawn(self._close_parts(old))
        log.info("reopened the session of workspace %s after an outside edit", live.workspace_id)
        return True

    async def _close_parts(self, parts: WorkspaceSession) -> None:
        with contextlib.suppress(Exception):
            await parts.aclose()

    def _start(self, live: LiveSession, text: str) -> None:
        live.channel.running = True
        live.started.clear()
        live.start_error = None
        live.last_active = time.monotonic()
        live.task = asyncio.create_task(self._drive(live, text), name=f"turn {live.workspace_id}")
        self.hub.status_changed(live.workspace_id)

    async def _drive(self, live: LiveSession, text: str | None, idle: bool = False) -> None:
        """Run `text` as a turn (or, `idle`, an idle compaction first), then what was queued."""
        ws = live.workspace_id
        next_text = text
        try:
            if idle:
                next_text = await self._idle_compaction(live)
            continuation: Decision | None = None
            while next_text is not None or continuation is not None:
                result = await self._one_turn(live, next_text, continuation)
                reason = result.reason if result is not None else "error"
                # The engine's queue: "step" messages the turn ended before delivering first,
                # then the "turn" ones, each as a turn of its own (an interrupt handed them back).
                next_text = None if reason == "interrupted" else live.parts.agent.next_queued()
                # A goal goes on once nothing the user sent is waiting (engine.goals).
                continuation = None
                if next_text is None and result is not None:
                    decision = await live.parts.agent.goals.after_turn(result)
                    if decision.kind in ("continue", "wrap_up"):
                        continuation = decision
                if next_text is not None or continuation is not None:
                    live.started.clear()
        finally:
            live.channel.running = False
            live.last_active = time.monotonic()
            self.hub.status_changed(ws)
            if live.stale and self.sessions.get(ws) is live:
                self._spawn(self.mark_stale(ws))

    # Idle compaction (xum.server.idlecompact) -------------------------------------------

    async def maybe_compact_idle(self) -> None:
        """From the maintenance loop: look for idle workspaces once per `idle_check_s`."""
        if time.monotonic() - self._idle_checked < self.idle_check_s:
            return
        self._idle_checked = time.monotonic()
        from xum.server.idlecompact import compact_idle

        await compact_idle(self)

    async def start_idle_compaction(self, record: WorkspaceRecord) -> bool:
        """Compact `record`'s session as an idle compaction, unless a turn runs in it."""
        async with self.lock_for(record.id):
            live = self.sessions.get(record.id)
            if (live is not None and live.busy) or session_files.is_busy(record.id):
                return False
            if live is None:
                live = await self._open(record)
            live.channel.running = True
            live.started.clear()
            live.start_error = None
            live.task = asyncio.create_task(
                self._drive(live, None, idle=True), name=f"idle compaction {record.id}"
            )
        self.hub.status_changed(record.id)
        return True

    async def _idle_compaction(self, live: LiveSession) -> str | None:
        """The compaction turn; returns the first message queued meanwhile."""
        from xum.server.idlecompact import note_compacted

        agent = live.parts.agent
        try:
            result = await agent.compactor.compaction_turn("idle")
        except XumError as exc:  # nothing to compact after all, or the model is gone
            log.info("idle compaction skipped in %s: %s", live.workspace_id, exc.message)
        else:
            if result.reason == "completed":
                await asyncio.to_thread(note_compacted, live.workspace_id, agent.log.last_seq)
                self.hub.workspaces_changed()
        return agent.next_queued()

    async def _one_turn(
        self,
        live: LiveSession,
        text: str | None,
        continuation: Decision | None = None,
        *,
        reopened: bool = False,
    ) -> TurnResult | None:
        """The turn of `text` (or a goal's continuation); None when it failed to start."""
        agent = live.parts.agent
        try:
            if continuation is not None:
                return await agent.goals.continue_turn(continuation)
            assert text is not None
            return await agent.run_turn(text)
        except asyncio.CancelledError:
            raise
        except SessionChangedError as exc:
            # Refused before the turn started (nothing was written): reopen and run it on the
            # log as it is now. A change in the middle of a turn ends that turn with the error;
            # the next message lands here and reopens.
            if not live.started.is_set() and not reopened and await self._reopen(live):
                return await self._one_turn(live, text, continuation, reopened=True)
            self._failed(live, exc)
            return None
        except XumError as exc:
            self._failed(live, exc)
            return None
        except Exception as exc:  # a bug: keep the server up and say so
            log.exception("turn failed in workspace %s", live.workspace_id)
            self._report(
                live, {"code": "internal", "message": f"the turn failed: {type(exc).__name__}"}
            )
            return None

    def _failed(self, live: LiveSession, exc: XumError) -> None:
        if not live.started.is_set():
            live.start_error = exc
        error = from_xum_error(exc)
        self._report(live, {"code": error.code, "message": error.message, "hint": error.hint})

    def _report(self, live: LiveSession, error: dict[str, Any]) -> None:
        clean = {k: v for k, v in error.items() if v is not None}
        live.channel.error = clean
        self.hub.publish(live.workspace_id, E.ErrorEvent.from_dict(clean))
        self.hub.status_changed(live.workspace_id)

    # Closing ----------------------------------------------------------------------------

    def _close_soon(self, live: LiveSession) -> None:
        self.sessions.pop(live.workspace_id, None)
        self._spawn(self._release(live))

    async def _release(self, live: LiveSession) -> None:
        with contextlib.suppress(Exception):
            await live.parts.aclose()

    async def close_idle(self) -> None:
        now = time.monotonic()
        for live in list(self.sessions.values()):
            if (
                not live.busy
                and now - live.last_active > self.idle_close_s
                and not live.parts.has_active_children()
                and self.sessions.get(live.workspace_id) is live
                and not live.busy
            ):
                self._close_soon(live)
        for ws, prepared in list(self.prepared.items()):
            init = prepared.created.init
            init_running = init is not None and not init.done
            if not init_running and now - prepared.since > PREPARED_KEEP_S:
                del self.prepared[ws]
                self._spawn(self._drop_prepared(prepared))

    async def _drop_prepared(self, prepared: Prepared) -> None:
        created = prepared.created
        if created.init is not None:
            with contextlib.suppress(Exception):
                created.init.cancel()
        with contextlib.suppress(Exception):
            await created.runtime.close()

    async def close_workspace(self, workspace_id: str, *, wait_s: float = 10.0) -> None:
        """Interrupt a running turn (archive, rename, delete) and release the session."""
        prepared = self.prepared.pop(workspace_id, None)
        if prepared is not None:
            await self._drop_prepared(prepared)
        live = self.sessions.get(workspace_id)
        if live is None:
            return
        self._take_queue(live)
        if live.busy:
            live.parts.agent.interrupt()
            assert live.task is not None
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(live.task), wait_s)
        self.sessions.pop(workspace_id, None)
        await self._release(live)

    async def shutdown(self, wait_s: float = 10.0) -> None:
        """Stop every turn (each ends durably, as interrupted) and release every session."""
        lives = list(self.sessions.values())
        for live in lives:
            live.parts.agent.take_queue()
            if live.busy:
                live.parts.agent.interrupt()
        tasks = [live.task for live in lives if live.task is not None and not live.task.done()]
        if tasks:
            _done, pending = await asyncio.wait(tasks, timeout=wait_s)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending, timeout=2.0)
        for live in lives:
            self.sessions.pop(live.workspace_id, None)
            await self._release(live)
        for ws in list(self.prepared):
            await self.close_workspace(ws)
        for task in list(self._background):
            task.cancel()


def require_idle(manager: SessionManager, workspace_id: str, action: str) -> None:
    if manager.is_running(workspace_id):
        raise ApiError(
            409,
            "conflict",
            f"a turn is running in this workspace; cannot {action} it now",
            "interrupt it first (POST /api/workspaces/{id}/interrupt)",
        )


def workspace_or_404(workspace_id: str) -> WorkspaceRecord:
    try:
        check_workspace_id(workspace_id)
    except XumError:
        raise not_found(f"no workspace with id '{workspace_id[:80]}'") from None
    record = registry.get_workspace(workspace_id)
    if record is None:
        raise not_found(f"no workspace with id '{workspace_id}'", "GET /api/workspaces lists them")
    return record


def _guarded(fn: Callable[..., None]) -> Callable[..., None]:
    """`fn`, called at once (the engine emits on the server's loop, where the hub lives). It runs
    inside the engine's emit: a failure is logged, never raised into the turn."""

    def call(*args: Any) -> None:
        try:
            fn(*args)
        except Exception:
            log.exception("publishing an event failed")

    return call
