"""`ExternalAgent`: an external ACP agent as the agent of a workspace, driven by the host.

It offers what the workspace host uses of xum's own `AgentSession` (`run_turn`, `interrupt`, the
message queue, `goals`, `compactor`, `configure`, `log`), so the host drives it the same way:
one prompt per turn, queued messages as turns of their own. What only xum's engine can do says
so: goals never continue (an external agent runs its own loop), compaction and Start Here are
refused with a clear error, and the model and agent are the external agent's own.

The agent process starts with the first turn and stays up between turns (one ACP session per
workspace, its id kept in the workspace's record); when it crashed, broke the protocol or was
killed after ignoring a cancel, the next turn starts it again and resumes the session with
`session/load` when the agent offers it (else it starts a new one and says so).

Every turn ends with a durable `turn_end`: `completed`, `interrupted` (a cancel), or `error` with
the reason in words (the agent could not start, crashed, hung at start-up, broke the protocol),
and every tool call it reported has a result, so the log stays valid for the next turn and for
replay.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from xum.core.errors import UsageError, XumError
from xum.core.ids import sortable_id
from xum.core.images import ImagePart
from xum.engine import events as E
from xum.engine.events import EventSink
from xum.engine.goals import Decision
from xum.engine.queue import MessageQueue
from xum.engine.recorder import Recorder, user_frame
from xum.engine.records import QueueMode, TurnReason, TurnResult
from xum.runtime.base import Runtime
from xum.store import frame_types as ev
from xum.store.writerlog import WriterLog
from xum.workspaces.external import strays
from xum.workspaces.external.client import XumClient
from xum.workspaces.external.connection import AgentProcess, ExternalAgentError, Launch
from xum.workspaces.external.definitions import ExternalAgentDefinition
from xum.workspaces.external.recording import TurnRecording, stop_reason
from xum.workspaces.external.sandboxed import local_launch

if TYPE_CHECKING:
    from xum.engine.goals import Goal
    from xum.engine.route import ModelRoute
    from xum.llm.types import ThinkingLevel
    from xum.tools.background import BackgroundHooks

# After a cancel, how long the agent has to end the prompt before xum stops it (some agents
# leave the cancelled command running, or never answer).
CANCEL_GRACE_S = 10.0
MODEL_PREFIX = "external:"


class NotForExternalAgents(UsageError):
    code = "not_for_external_agents"


def _refusal(what: str) -> NotForExternalAgents:
    return NotForExternalAgents(
        f"{what} is not available for external agents",
        hint="it is part of xum's own engine; an external agent keeps its own context",
    )


class ExternalGoals:
    """Goals are xum's engine's: an external agent's workspace has none, and none continues."""

    current: Goal | None = None

    async def after_turn(self, result: TurnResult) -> Decision:
        return Decision("none")

    async def continue_turn(self, decision: Decision) -> TurnResult:
        raise _refusal("a goal")

    async def set(
        self,
        objective: str,
        *,
        budget_cents: int | None = None,
        turn_cap: int | None = None,
        source: str = "cli",
    ) -> Goal:
        raise _refusal("a goal")

    def spent_cents(self, goal: Goal) -> int | None:
        return None


class ExternalCompaction:
    """Compaction and Start Here rewrite xum's own context: refused."""

    async def start_here(self, seq: int) -> int:
        raise _refusal("Start Here")

    async def compaction_turn(self, trigger: str) -> TurnResult:
        raise _refusal("compaction")


class ExternalAgent:
    def __init__(
        self,
        definition: ExternalAgentDefinition,
        *,
        workspace_id: str,
        log: WriterLog,
        runtime: Runtime,
        client: XumClient,
        env: Mapping[str, str],
        emit: EventSink,
        session_id: str | None = None,
    ) -> None:
        self.definition = definition
        self.workspace_id = workspace_id
        self.log = log
        self.runtime = runtime
        self.client = client
        client.agent_name = definition.name
        self.env = dict(env)
        self.emit = emit
        self.recorder = Recorder(log, emit)
        self.queue = MessageQueue()
        self.goals = ExternalGoals()
        self.compactor = ExternalCompaction()
        self.background_hooks: BackgroundHooks | None = None  # it has no background commands
        self.session_id = session_id  # the agent's ACP session (kept in the record)
        self.process: AgentProcess | None = None
        self.running = False
        self._cancel = asyncio.Event()
        self._cost_seen: float | None = None  # the agent's cumulative USD cost, when it says

    @property
    def model(self) -> str:
        return MODEL_PREFIX + self.definition.name

    @property
    def agent_id(self) -> str:
        return self.definition.name

    # What the host calls ---------------------------------------------------------------------

    def queue_message(self, text: str, when: QueueMode = "step") -> None:
        # An external agent's prompt is one request: a message cannot join it mid-way, so every
        # queued message runs as a turn of its own.
        self.queue.put(text, "turn")

    def next_queued(self) -> str | None:
        return self.queue.next_turn()

    def take_queue(self) -> list[str]:
        return self.queue.take_all()

    # As a sub-agent, the manager takes what a turn left queued: every message is a turn here.
    def take_step_queue(self) -> list[str]:
        return []

    def take_turn_queue(self) -> list[str]:
        return self.queue.take_turn()

    def interrupt(self) -> None:
        """Cancel the running prompt (no-op between turns)."""
        if self.running:
            self._cancel.set()

    def configure(
        self,
        *,
        route: ModelRoute | None = None,
        thinking: ThinkingLevel | None = None,
        agent: str | None = None,
    ) -> None:
        raise NotForExternalAgents(
            f"this workspace runs the external agent {self.definition.display}: its model and "
            "agent are the external agent's own",
            hint="create a workspace with xum's own agent to choose a model",
        )

    async def hold_writer(self, purpose: str) -> None:
        await self.recorder.hold_for_session(purpose)

    async def agent_turn(
        self, text: str, *, synthetic: ev.SyntheticNote | None = None, **_: Any
    ) -> TurnResult:
        return await self.run_turn(text)

    async def run_turn(self, text: str, images: Sequence[ImagePart] = ()) -> TurnResult:
        """One prompt to the agent, recorded as one turn."""
        if images:
            raise UsageError(
                "images are not sent to external agents yet", hint="send the message as text"
            )
        result = TurnResult(turn_id=sortable_id(), reason="completed", agent=self.agent_id)
        await self.recorder.begin_turn(result.turn_id)
        self.running = True
        self._cancel.clear()
        try:
            start: ev.TurnStartData = {"turn_id": result.turn_id, "model": self.model}
            await self.recorder.append(
                [ev.spec(ev.TURN_START, start), user_frame(text, None, None)]
            )
            recording = TurnRecording(
                self.recorder,
                self.emit,
                model=self.model,
                result=result,
                terminal_text=self.client.terminal_text,
                cost_before=self._cost_seen,
                mask=self.client.place.mask,
            )
            try:
                reason, finish = await self._prompt(text, recording, result)
            except asyncio.CancelledError:
                self.client.recording = None
                recording.finish_now("interrupted")
                raise
            self.client.recording = None
            if result.error is not None:
                # The agent's own words (its stderr) may carry a secret.
                result.error["message"] = self.client.place.mask(result.error["message"])
                self.emit(E.ErrorEvent.from_dict(result.error))
            await recording.finish(reason, finish)
            if recording.cost_now is not None:
                self._cost_seen = recording.cost_now
        finally:
            self.client.recording = None
            self.running = False
            await self.recorder.end_turn_off_loop()
        return result

    # The prompt ------------------------------------------------------------------------------

    async def _prompt(
        self, text: str, recording: TurnRecording, result: TurnResult
    ) -> tuple[TurnReason, str]:
        # Starting the agent may take up to START_TIMEOUT_S: a cancel meanwhile ends it.
        ready = asyncio.ensure_future(self._ready())
        stop = asyncio.ensure_future(self._cancel.wait())
        try:
            await asyncio.wait({ready, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
            if not ready.done():
                ready.cancel()
                with contextlib.suppress(BaseException):
                    await ready  # it stops the half-started agent on its way out
        if ready.cancelled():
            return "interrupted", "interrupted"
        try:
            process, session_id = ready.result()
        except ExternalAgentError as exc:
            result.error = exc.to_dict()
            return "error", "error"
        if self._cancel.is_set():
            return "interrupted", "interrupted"
        self.client.recording = recording
        pid = process.process.pid if process.process is not None else None
        since = strays.now()
        prompt = asyncio.ensure_future(process.prompt(session_id, text))
        cancelled = asyncio.ensure_future(self._cancel.wait())
        try:
            await asyncio.wait({prompt, cancelled}, return_when=asyncio.FIRST_COMPLETED)
            if not prompt.done():
                await process.cancel(session_id)
                await asyncio.wait({prompt}, timeout=CANCEL_GRACE_S)
            if not prompt.done():
                # It ignored the cancel: stop it and what it started (the next turn starts it
                # again and resumes its session where it can).
                prompt.cancel()
                await self._stop_process()
                self.emit(
                    E.Advisory(
                        kind="external-agent-stopped",
                        message=f"{self.definition.display} did not end the cancelled prompt "
                        f"within {CANCEL_GRACE_S:.0f} s, so xum stopped it",
                    )
                )
                return "interrupted", "interrupted"
        finally:
            cancelled.cancel()
            if not prompt.done():
                prompt.cancel()
        if self._cancel.is_set() and pid and process.alive:
            await self._stop_leftovers(pid, since)
        try:
            answer = prompt.result()
        except asyncio.CancelledError:
            return "interrupted", "interrupted"
        except ExternalAgentError as exc:
            await self._stop_process()
            if self._cancel.is_set():
                return "interrupted", "interrupted"
            result.error = exc.to_dict()
            return "error", "error"
        if answer.usage is not None:
            result.usage.input_tokens += answer.usage.input_tokens
            result.usage.output_tokens += answer.usage.output_tokens
            result.usage.cache_read_tokens += answer.usage.cached_read_tokens or 0
            result.usage.cache_write_tokens += answer.usage.cached_write_tokens or 0
            result.usage.reasoning_tokens += answer.usage.thought_tokens or 0
        reason, finish = stop_reason(str(answer.stop_reason))
        if finish == "refusal":
            result.error = XumError(
                f"{self.definition.display} refused to go on with this prompt",
                hint="rephrase the request, or ask the agent why",
            ).to_dict()
        return reason, finish

    async def _stop_leftovers(self, pid: int, since: int) -> None:
        """The agent ended the cancelled prompt but may have left its command running (Codex
        does): stop what it started during the prompt, keeping the agent and its session."""
        stopped = await asyncio.to_thread(strays.stop_leftovers, pid, since)
        if stopped:
            self.emit(
                E.Advisory(
                    kind="external-agent-leftovers",
                    message=f"{self.definition.display} left {len(stopped)} process(es) of the "
                    "cancelled prompt running, so xum stopped them",
                )
            )

    async def _ready(self) -> tuple[AgentProcess, str]:
        """The running agent and its session: started, initialized and its session opened (or
        resumed) when it is not running."""
        if self.process is not None and self.process.alive and self.session_id is not None:
            return self.process, self.session_id
        await self._stop_process()
        process = AgentProcess(
            self.definition, cwd=self.runtime.workspace_path, env=self.env, client=self.client
        )
        self.process = process
        try:
            launch = await self._launch()
            await process.start(launch)
            init = await process.initialize()
            capabilities = init.agent_capabilities
            can_load = bool(capabilities is not None and capabilities.load_session)
            refused: str | None = None
            if self.session_id is not None and can_load:
                try:
                    await process.load_session(self.session_id)  # its replay is not recorded
                except ExternalAgentError as exc:
                    if not process.alive:
                        raise
                    # It offers session/load but could not load this one (Gemini CLI 0.61
                    # answers "Session not found"): the transcript is in xum's log, go on anew.
                    refused = f" ({exc.message})"
            if self.session_id is None or not can_load or refused is not None:
                if self.session_id is not None:
                    self.emit(
                        E.Advisory(
                            kind="external-agent-new-session",
                            message=f"{self.definition.display} cannot resume its earlier "
                            f"session{refused or ''}: this turn starts a new one",
                        )
                    )
                self.session_id = await process.new_session()
                await asyncio.to_thread(_keep_session, self.workspace_id, self.session_id)
        except BaseException:
            await self._stop_process()
            raise
        return process, self.session_id

    async def _launch(self) -> Launch | None:
        """How the agent starts: on an SSH workspace's host through its ssh client, in a Docker
        or Dev Container workspace's container through `exec -i` (the same launcher); here, in
        the sandbox (None: the plain program, as the user)."""
        from xum.runtime.ssh import SshRuntime

        if isinstance(self.runtime, SshRuntime):
            from xum.workspaces.external.remote import remote_launch

            return await remote_launch(self.definition, self.runtime, self.client)
        return await local_launch(
            self.definition, self.env, self.runtime.workspace_path, self.client
        )

    async def _stop_process(self) -> None:
        process, self.process = self.process, None
        if process is not None:
            if process.process is not None and process.process.returncode is None:
                # Killing the agent's group misses what it started in sessions of their own
                # (Codex's sandboxed commands): those go first, whenever they started.
                await asyncio.to_thread(strays.stop_leftovers, process.process.pid, 0)
            await process.kill()
        await self.client.close()

    async def aclose(self) -> None:
        """The workspace closes: the agent, its process group and its terminals stop."""
        try:
            await self._stop_process()
        finally:
            self.recorder.close()


def _keep_session(workspace_id: str, session_id: str) -> None:
    from xum.store import registry

    with contextlib.suppress(XumError):
        registry.update_workspace(workspace_id, external_session=session_id)
