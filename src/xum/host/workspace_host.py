"""`WorkspaceHost`: one workspace's live agent session, the same for every front-end.

A host is opened once, through the one assembly (`xum.workspaces.assembly`), and drives the
session: a message starts a turn, or waits in the engine's queue while one runs ("step": after
the running tool calls; "turn": as a turn of its own afterwards); when a turn ends the host runs
what was queued, one turn each, then the goal's continuations (`engine.goals`) once nothing the
user sent is waiting. An idle compaction runs the same way, as a compaction turn first. Every
event the session emits goes to the front-end's `HostListener` on the spot.

The session's writer lock is taken per turn (the engine's turn takes it and lets it go), never
for the host's whole life, so an idle host does not make other workspaces of the project think
an agent runs here.

When something outside xum edits the log, the writer refuses the next turn (`session_changed`,
before the turn wrote anything): the host opens the session again from the log as it is and runs
the turn on that (`_reopen`); messages queued meanwhile move to the new session.

A settings change (`Hosts.change_settings` from the server, `Hosts.configure` from the other
front-ends) switches the open session (`AgentSession.configure`): the next turn uses the new
model, thinking level or agent, with no reopen. Only what a session cannot take (a route that
does not resolve, a providers change) marks the host stale: `Hosts` closes it once its turn ends
and the next message opens it again.

A one-shot front-end (`xum run`) opens a host with `OpenSettings` (its flags' model, thinking
level and agent, a budget, the agent's exit code) and reads each turn's result through
`turn_ended`, which may also keep a goal from continuing.

The per-workspace lock and the registry of hosts live in `xum.host.hosts`; the methods here
that change what runs are called with that lock held.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from xum.core.errors import SessionChangedError, XumError
from xum.core.images import ImagePart
from xum.engine import events as E
from xum.host.background import WAKE_KIND, Watch
from xum.host.governor import Governor, HeldTurnStopped
from xum.host.inflight import InFlight
from xum.host.listener import HostListener
from xum.host.pending import Approvals, Questions
from xum.llm.gate import request_gate
from xum.store import registry
from xum.store.registry import WorkspaceRecord
from xum.workspaces.safety.choice import SafetyChoice

if TYPE_CHECKING:
    from xum.engine.extensions import ToolMiddleware
    from xum.engine.goals import Decision
    from xum.engine.records import TurnResult
    from xum.engine.route import ModelRoute
    from xum.llm.types import ThinkingLevel
    from xum.workspaces.assembly import WorkspaceSession
    from xum.workspaces.lifecycle import CreatedWorkspace
    from xum.workspaces.subagents.host import TaskSettings

log = logging.getLogger("xum.host")

When = Literal["step", "turn"]  # the engine's queue: after the running step, after the turn
Frontend = Literal["server", "tui", "acp", "run"]


@dataclass(frozen=True)
class HostOptions:
    """How a front-end wants its sessions opened."""

    frontend: Frontend = "server"
    purpose: str = "server"  # names the writer in lock files and errors
    safety: SafetyChoice = field(default_factory=lambda: SafetyChoice(approval="ask"))
    people: bool = True  # questions and approvals wait for a person (the pending maps)
    goals: bool = True  # offer the goal tools; the drive loop continues goals
    tool_middleware: Sequence[ToolMiddleware] = ()
    # Monitored background processes wake the workspace with a turn (xum.host.background);
    # off for `xum run`, which runs its request (and goal) and exits.
    wakes: bool = True


@dataclass(frozen=True)
class OpenSettings:
    """What one opening of a host takes in place of the record's own settings: a one-shot
    front-end (`xum run`) that resolved the model, thinking and agent from its flags, bounds the
    session with a budget and lets the agent choose the process's exit code. Kept by the host
    for a reopen."""

    route: ModelRoute | None = None  # with `thinking`; None: the record's (`route_for`)
    thinking: ThinkingLevel | None = None
    agent: str | None = None  # the agent to run; None: the record's
    budget_usd: float | None = None
    set_exit_code: Callable[[int, str], None] | None = None
    task_settings: TaskSettings | None = None


TurnHook = Callable[["TurnResult"], Awaitable[bool]]


@dataclass
class HostServices:
    """What every host of a process shares: where events go, what waits for a person, how a
    background task is kept alive."""

    listener: HostListener
    questions: Questions
    approvals: Approvals
    spawn: Callable[[Coroutine[Any, Any, Any]], None]
    options: HostOptions
    governor: Governor = field(default_factory=Governor)  # one per process (xum.host.governor)


class WorkspaceHost:
    def __init__(self, workspace_id: str, services: HostServices) -> None:
        self.workspace_id = workspace_id
        self.services = services
        self.parts: WorkspaceSession | None = None
        self.task: asyncio.Task[None] | None = None
        self.last_active = time.monotonic()
        self.stale = False  # settings changed: close once the current turn ends
        self.driving = False  # a drive runs (a turn, or between queued ones)
        self.started = asyncio.Event()  # the current drive's turn has started
        self.start_error: XumError | None = None
        self.inflight = InFlight()
        self.on_drive_end: Callable[[WorkspaceHost], None] = lambda _h: None
        self.settings = OpenSettings()
        # A front-end's look at each turn's result before the goal decides what follows;
        # False: continue no goal after it (`xum run` without a goal of its own).
        self.turn_ended: TurnHook | None = None
        self.decision: Decision | None = None  # the goal's last decision in this drive
        # The process's governor as this workspace sees it: every request of its turns (and of
        # the sub-agents they start) waits there, and says so in this workspace's events.
        self.gate = services.governor.gate_for(workspace_id, self._emit)
        self.held = asyncio.Event()  # the drive's next turn waits for the fleet budget
        self.unhold = asyncio.Event()  # the user stopped the held turn: it does not run
        self.project = ""  # the workspace's project path (the fleet budget counts per project)
        # Background processes: their wake-ups wait here for a turn; an idle host asks its
        # registry (`on_wake`, set by Hosts) to start one under the workspace's lock.
        self.watch = Watch(self._emit, self._poke)
        self.on_wake: Callable[[WorkspaceHost], None] = lambda _h: None

    # Opening ----------------------------------------------------------------------------

    async def open(
        self,
        record: WorkspaceRecord,
        take_created: Callable[[], CreatedWorkspace | None] = lambda: None,
        settings: OpenSettings | None = None,
    ) -> None:
        """Open the session. Configuration problems (no provider, unknown model) raise before
        `take_created` is called, so a new workspace's prepared runtime stays for a retry."""
        if settings is not None:
            self.settings = settings
        self.parts = await self._assemble(record, take_created)

    async def _assemble(
        self,
        record: WorkspaceRecord,
        take_created: Callable[[], CreatedWorkspace | None] = lambda: None,
    ) -> WorkspaceSession:
        from xum.context.workspace import AgentSelection
        from xum.workspaces.assembly import open_workspace_session, route_for

        options = self.services.options
        given = self.settings
        self.project = record.project_path
        route: ModelRoute | None = None
        thinking: ThinkingLevel | None = None
        if given.route is not None and given.thinking is not None:
            route, thinking = given.route, given.thinking
        elif record.external_agent is None:  # an external agent has its own models
            route, thinking = await asyncio.to_thread(route_for, record)
        people = options.people
        parts = await open_workspace_session(
            record,
            route=route,
            thinking=thinking,
            emit=self._emit,
            created=take_created(),
            ask_user=self.services.questions.asker(record.id) if people else None,
            approver=self.services.approvals.approver_for(record.id) if people else None,
            safety=options.safety,
            children=self._child_event,
            purpose=options.purpose,
            goals=options.goals,
            tool_middleware=options.tool_middleware,
            selection=AgentSelection(agent_id=given.agent) if given.agent is not None else None,
            budget_usd=given.budget_usd,
            set_exit_code=given.set_exit_code,
            task_settings=given.task_settings,
            subagent_gate=self.gate,
        )
        if options.wakes:
            parts.agent.background_hooks = self.watch.hooks()
        return parts

    async def configure(
        self, record: WorkspaceRecord, *, route: bool, thinking: bool, agent: str | None
    ) -> None:
        """Switch the open session to `record`'s model (`route`) and thinking level
        (`thinking`), and to `agent`, from its next turn on, without reopening it."""
        from xum.workspaces.assembly import route_for

        new_route, level = await asyncio.to_thread(route_for, record)
        self.session.agent.configure(
            route=new_route if route else None,
            thinking=level if thinking else None,
            agent=agent,
        )

    @property
    def session(self) -> WorkspaceSession:
        assert self.parts is not None, "the host is not open"
        return self.parts

    # What a front-end reads -------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self.task is not None and not self.task.done()

    def queued(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The waiting messages (after the step, after the turn), oldest first."""
        return self.session.agent.queue.texts

    def in_flight(self) -> list[E.Event]:
        """The running calls and their live output so far (for a subscriber that joins late)."""
        return self.inflight.snapshot()

    # Driving ----------------------------------------------------------------------------

    def queue(self, text: str, when: When) -> None:
        """A message while a turn runs: the engine delivers it after the step or the turn."""
        self.last_active = time.monotonic()
        self.services.questions.dismiss(self.workspace_id)  # a chat message, not an answer
        self.session.agent.queue_message(text, when)
        self._status()

    def _poke(self) -> None:
        """A background wake-up arrived: a running drive delivers it after its turn; an idle
        host asks for a drive of its own."""
        if not self.driving:
            self.on_wake(self)

    def start(
        self, text: str | None, *, idle: bool = False, images: Sequence[ImagePart] = ()
    ) -> None:
        """Drive `text` as a turn (or, `idle`, an idle compaction), then what gets queued.
        `images` (stored already) go with `text`."""
        self.driving = True
        self.started.clear()
        self.held.clear()
        self.unhold.clear()
        self.start_error = None
        self.last_active = time.monotonic()
        name = f"{'idle compaction' if idle else 'turn'} {self.workspace_id}"
        # The drive runs with this workspace's gate as the request gate: every client its turns
        # use (and every sub-agent task they start) asks the governor before each request.
        context = contextvars.copy_context()
        context.run(request_gate.set, self.gate)
        self.task = asyncio.create_task(self._drive(text, idle, images), name=name, context=context)
        self._status()

    async def wait_done(self) -> None:
        """Wait until the drive (the turn, what was queued, the goal's continuations) ends."""
        if self.task is not None:
            await asyncio.shield(self.task)

    async def wait_started(self, timeout_s: float) -> None:
        """Wait until the turn is under way, so a message that cannot start one (an unusable
        slash command, a session another process grabbed) raises its error here."""
        task = self.task
        if task is None:
            return
        waiter = asyncio.ensure_future(self.started.wait())
        held = asyncio.ensure_future(self.held.wait())  # held for the budget: it says so itself
        await asyncio.wait({waiter, held, task}, timeout=timeout_s, return_when="FIRST_COMPLETED")
        waiter.cancel()
        held.cancel()
        if not self.started.is_set() and self.start_error is not None:
            raise self.start_error

    def interrupt(self) -> list[str]:
        """Stop the running turn; the messages still queued are handed back, not run."""
        unsent = self.take_queue()
        if self.busy:
            if self.held.is_set():
                self.unhold.set()  # held for the budget: no turn to stop, the wait ends
            else:
                self.session.agent.interrupt()
        self._status()
        return unsent

    def take_queue(self) -> list[str]:
        unsent: list[str] = self.session.agent.take_queue()
        return unsent

    async def start_here(self, seq: int) -> int:
        """Restart the context from the reply or plan at `seq` (a boundary frame)."""
        self.last_active = time.monotonic()
        boundary: int = await self.session.agent.compactor.start_here(seq)
        self._status()
        return boundary

    async def _drive(self, text: str | None, idle: bool, images: Sequence[ImagePart] = ()) -> None:
        """`text` (None: the waiting background notices, xum.host.background) with `images`,
        then what was queued, one turn each; then the background notices; then a goal's
        continuation."""
        next_text = text
        next_images = images
        self.decision = None
        try:
            if idle:
                next_text = await self._idle_compaction()
            continuation: Decision | None = None
            notice = self.watch.take() if next_text is None else None
            while next_text is not None or continuation is not None or notice is not None:
                result = await self._one_turn(next_text, continuation, notice, images=next_images)
                next_images = ()
                reason = result.reason if result is not None else "error"
                interrupted = reason == "interrupted"
                agent = self.session.agent
                # The engine's queue: "step" messages the turn ended before delivering first,
                # then the "turn" ones, each a turn of its own (an interrupt handed them back).
                next_text = None if interrupted else agent.next_queued()
                # A goal goes on once nothing the user sent is waiting (engine.goals).
                continuation = None
                goes_on = True
                if result is not None and self.turn_ended is not None:
                    goes_on = await self.turn_ended(result)
                notice = self.watch.take() if next_text is None and not interrupted else None
                if next_text is None and notice is None and result is not None and goes_on:
                    decision = await agent.goals.after_turn(result)
                    self.decision = decision
                    if decision.kind in ("continue", "wrap_up"):
                        continuation = decision
                if next_text is None and notice is None and continuation is None:
                    # What came while the turn's end was handled (no await from here on).
                    next_text = None if interrupted else agent.next_queued()
                    notice = self.watch.take() if next_text is None and not interrupted else None
                if next_text is not None or continuation is not None or notice is not None:
                    self.started.clear()
        finally:
            self.driving = False
            self.last_active = time.monotonic()
            self._status()
            self.on_drive_end(self)

    async def _one_turn(
        self,
        text: str | None,
        continuation: Decision | None,
        notice: str | None = None,
        *,
        reopened: bool = False,
        images: Sequence[ImagePart] = (),
    ) -> TurnResult | None:
        """The turn of `text` (or a goal's continuation, or background `notice`s); None when
        it failed to start."""
        agent = self.session.agent
        try:
            # A new turn waits while the fleet budget is spent; a running one is never cut.
            runs = await self.gate.hold_for_budget(self.project, self._on_hold, self.unhold)
            self.held.clear()
            if not runs:  # stopped while held: nothing ran, nothing is queued
                self._failed(
                    HeldTurnStopped(
                        "the turn was stopped while it waited for the fleet budget; it did not run",
                        hint="send it again once the budget is raised (governor.budget in "
                        "config.json) or the UTC day has ended",
                    )
                )
                return None
            # The session's command sandbox starts while the model answers (once a session).
            self.session.warm_sandbox()
            if continuation is not None:
                return await agent.goals.continue_turn(continuation)
            if text is None and notice is not None:
                return await agent.agent_turn(notice, synthetic={"kind": WAKE_KIND})
            assert text is not None
            return await agent.run_turn(text, images)
        except asyncio.CancelledError:
            raise
        except SessionChangedError as exc:
            # Refused before the turn started (nothing was written): reopen and run it on the
            # log as it is now. A change in the middle of a turn ends that turn with the error;
            # the next message lands here and reopens.
            if not self.started.is_set() and not reopened and await self._reopen():
                return await self._one_turn(
                    text, continuation, notice, reopened=True, images=images
                )
            self._failed(exc)
            return None
        except XumError as exc:
            self._failed(exc)
            return None
        except Exception as exc:  # a bug: keep the process up and say so
            log.exception("turn failed in workspace %s", self.workspace_id)
            failure = exc
            self._guard(lambda: self.services.listener.turn_failed(self.workspace_id, failure))
            return None

    async def _idle_compaction(self) -> str | None:
        """The compaction turn; returns the first message queued meanwhile."""
        from xum.host.idlecompact import note_compacted

        agent = self.session.agent
        try:
            result = await agent.compactor.compaction_turn("idle")
        except XumError as exc:  # nothing to compact after all, or the model is gone
            log.info("idle compaction skipped in %s: %s", self.workspace_id, exc.message)
        else:
            if result.reason == "completed":
                await asyncio.to_thread(note_compacted, self.workspace_id, agent.log.last_seq)
                self._guard(self.services.listener.workspaces_changed)
        return agent.next_queued()

    async def _reopen(self) -> bool:
        """The log changed outside xum (an editor, a script, a restored backup): open the
        session again from what is on disk (the scan quarantines what no longer checks out,
        docs/sessions.md) in place of this one. False when it cannot be reopened."""
        record = registry.get_workspace(self.workspace_id)
        if record is None:
            return False
        try:
            parts = await self._assemble(record)
        except XumError:
            log.exception("could not reopen the session of workspace %s", self.workspace_id)
            return False
        old, self.parts = self.session, parts
        for text in old.agent.take_queue():  # a message queued meanwhile is not lost
            parts.agent.queue_message(text, "turn")
        self.services.spawn(_close_quietly(old))
        log.info("reopened the session of workspace %s after an outside edit", self.workspace_id)
        return True

    def _failed(self, exc: XumError) -> None:
        if not self.started.is_set():
            self.start_error = exc
        self._guard(lambda: self.services.listener.turn_failed(self.workspace_id, exc))

    # Closing ----------------------------------------------------------------------------

    async def stop(self, wait_s: float) -> None:
        """Hand back the queue, interrupt a running turn and wait (bounded) for it to end."""
        if self.parts is None:
            return
        self.interrupt()
        if self.busy:
            assert self.task is not None
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(self.task), wait_s)

    async def aclose(self) -> None:
        if self.parts is not None:
            await _close_quietly(self.parts)

    # Events -----------------------------------------------------------------------------

    def _emit(self, event: E.Event) -> None:
        if isinstance(event, E.TurnStart):
            self.started.set()
        self._count_cost(event)
        self.inflight.fold(event)
        self._guard(lambda: self.services.listener.event(self.workspace_id, event))

    def _child_event(self, workspace_id: str, event: E.Event) -> None:
        self._count_cost(event)
        self._guard(lambda: self.services.listener.event(workspace_id, event))

    def _count_cost(self, event: E.Event) -> None:
        """What a reply or a compaction of this workspace (or of its sub-agents) cost goes
        into the fleet's daily spending."""
        if isinstance(event, E.AssistantMessage | E.Compaction) and event.cost_usd:
            self.services.governor.note_cost(self.project, event.cost_usd)

    def _on_hold(self) -> None:
        self.held.set()
        self._status()

    def _status(self) -> None:
        self._guard(lambda: self.services.listener.status_changed(self.workspace_id))

    @staticmethod
    def _guard(call: Callable[[], None]) -> None:
        """Listener calls run inside the engine's emit: a failure is logged, never raised into
        the turn."""
        try:
            call()
        except Exception:
            log.exception("a front-end failed to take a host event")


async def _close_quietly(parts: WorkspaceSession) -> None:
    with contextlib.suppress(Exception):
        await parts.aclose()
