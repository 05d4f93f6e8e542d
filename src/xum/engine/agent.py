"""AgentSession: the turn loop of one workspace, its model, and its message queues.

A turn: record the user message, then repeat steps until the model stops calling tools: build
the request from the log's projection, stream the reply (deltas become events), commit the
assistant message, run its tool calls, record each result. Whatever ends the turn (completion,
Ctrl-C, a provider error, the budget, the step limit, a doom loop) it ends with a durable
`turn_end`, and every tool call in the log has a result: the provider history stays valid.

The jobs around the loop each have a module: the recorder appends frames and emits the events
derived from them (`recorder`), the ledger keeps cost and budget (`ledger`), plan mode and
required tools keep their per-turn state (`planmode`), requests are built and put on record
(`requests`), and what a session takes over from its log is read once (`resume`).

Every turn (a user's, a goal continuation, a compaction) runs in the turn envelope
(`envelope`: the running flag, interrupts, the writer lock, the error mapping, the durable
close). The parts that serve the session (`compaction`, `goals`, `dispatch`, `calls`) see it
through the protocols of `turnhost` and never import this module.

The model, client and thinking level are the session's (`configure` changes them for the turns
to come, without reopening) or, for one turn, a `TurnOverride` the turn carries: while a turn
runs, `route`, `client` and `thinking` are that turn's.

Messages sent while a turn runs are queued here, for "after the step" (delivered when the
running tool calls finish) or "after the turn" (each runs as a turn of its own). A front-end
asks `next_queued()` for the next message to run once a turn ends.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from xum.context.workspace import AgentSelection, ContextProvider, StaticContext, WorkspaceContext
from xum.core.ids import sortable_id
from xum.core.images import ImagePart
from xum.core.messages import text_message
from xum.engine import events as E
from xum.engine.calls import CallRunner
from xum.engine.commits import BUDGET_TOOL_OUTPUT, INTERRUPTED_TOOL_OUTPUT, Commits
from xum.engine.compaction import Compactor, ForceCompaction
from xum.engine.contextsync import ContextSync
from xum.engine.dispatch import run_message
from xum.engine.envelope import ModelChange, ModelChoice, Turn, TurnEnvelope, TurnKind
from xum.engine.events import EventSink, null_sink
from xum.engine.extensions import ToolCall, ToolMiddleware
from xum.engine.fallback import Fallbacks
from xum.engine.goals import GOAL_TOOLS, Goals
from xum.engine.images import ImageSources, check_images
from xum.engine.ledger import BudgetExceeded, Ledger
from xum.engine.native_search import native_search
from xum.engine.planmode import TurnRules
from xum.engine.queue import MessageQueue
from xum.engine.recorder import FrameSpec, Recorder, user_frame
from xum.engine.records import Interrupted, QueueMode, SessionSettings, TurnResult, WorkspaceInfo
from xum.engine.requests import StepRecords, debug_record, debug_requested, write_debug_request
from xum.engine.resume import resume
from xum.engine.route import ModelRoute, resolve_route
from xum.engine.stream import StreamState, stream_step
from xum.llm.client import LLMClient, open_client
from xum.llm.errors import LLMError
from xum.llm.http import first_request_sent
from xum.llm.types import LLMRequest, ThinkingLevel, ToolChoice, ToolSpec
from xum.runtime.base import Runtime
from xum.store import frame_types as ev
from xum.store.projection import HistoryProjection
from xum.store.sessionlog import SessionLog
from xum.tools import registry
from xum.tools.tasking import CHILD_TOOLS, HOST_TOOLS, SubAgentHost

if TYPE_CHECKING:
    # Imported where they are used, off the start-up path: the tool machinery with the first
    # tool call (the tool prewarm thread loads it while the first reply streams), the user-input
    # helpers with the first slash command.
    from xum.engine.userinput import PreparedMessage, TurnOverride
    from xum.tools.background import BackgroundHooks, BackgroundProcesses
    from xum.tools.base import AskUser, SkillAccess, TodoItem, ToolContext
    from xum.tools.live import LiveOutputs
    from xum.tools.mcp_host import McpHost

# Re-exported: these records were defined here before `xum.engine.records` held them.
__all__ = ["AgentSession", "SessionSettings", "TurnResult", "WorkspaceInfo"]


class AgentSession:
    def __init__(
        self,
        *,
        workspace: WorkspaceInfo,
        log: SessionLog,
        runtime: Runtime,
        route: ModelRoute,
        client: LLMClient,
        settings: SessionSettings,
        scratch_dir: Path,
        emit: EventSink = null_sink,
        middleware: Sequence[ToolMiddleware] = (),
        set_exit_code: Callable[[int, str], None] | None = None,
        base_env: dict[str, str] | None = None,
        subagents: SubAgentHost | None = None,
        context: ContextProvider | None = None,
        agent: AgentSelection | None = None,
        ask_user: AskUser | None = None,
        skills: SkillAccess | None = None,
        resolve_model: Callable[[str], ModelRoute] | None = None,
        mcp: McpHost | None = None,
    ) -> None:
        self.workspace = workspace
        self.log = log
        self.runtime = runtime
        # The session's model; a running turn's is `envelope.current.model` (see `route`).
        self._route = route
        self._client = client
        self._owned_clients: list[LLMClient] = []  # opened by `configure`, closed by aclose
        self._pending: list[ModelChange] = []  # `configure` calls made while a turn ran
        self.settings = settings
        self.scratch_dir = scratch_dir
        self.emit = emit
        self.middleware = list(middleware)
        self.set_exit_code = set_exit_code
        self.base_env = dict(base_env or {})
        # Children (the task tools) when a higher layer hosts them; background bash processes,
        # which live as long as this session (aclose() kills them).
        self.subagents = subagents
        self._background: BackgroundProcesses | None = None  # made on first use
        self.background_hooks: BackgroundHooks | None = None  # who hears of them (the host)
        # Live tool output (`tool-output` events), coalesced and bounded per stream.
        self._live: LiveOutputs | None = None  # made with the first tool call
        resumed = resume(log.frames)
        self.todos: list[TodoItem] = resumed.todos
        self.recorder = Recorder(log, emit)
        self.ledger = Ledger(
            cost=resumed.cost,
            cost_known=resumed.cost_known,
            budget_usd=settings.budget_usd,
            subagents=subagents,
            emit=emit,
            by_model=resumed.by_model,
        )
        self.steps = StepRecords(resumed.header_key)
        self.commits = Commits(self.recorder, self.steps, self.ledger)
        self.fallbacks = Fallbacks(self, self.commits)  # a refusal moves the turn down its chain
        self.projection = HistoryProjection()
        self.queue = MessageQueue()
        self.envelope = TurnEnvelope(self.recorder, self.commits, emit)
        self._noted_params: set[str] = set()  # withheld modelParameters already reported
        # The tools of the current segment, as offered (set from the frozen context).
        self._tool_specs: list[ToolSpec] = []
        self._offered: list[str] = []
        self._tools_hash = ""
        self._images = ImageSources(workspace.id)
        # What the model is told: the agent, the workspace's instructions and skills, frozen
        # per context segment (see xum.engine.contextsync and xum.context.frozen).
        self.context = ContextSync(
            context or StaticContext(settings.system_prompt, settings.tools),
            agent or AgentSelection(),
        )
        self.rules = TurnRules(self.context, runtime, emit)
        self.calls = CallRunner(self)
        self.ask_user = ask_user
        if skills is None and isinstance(context, WorkspaceContext):
            skills = context.skill_access()
        self.skills = skills
        self.resolve_model = resolve_model or resolve_route
        # Context usage, auto-compaction, /compact, /clear and Start Here.
        self.compactor = Compactor(self)
        self.goals = Goals(self)  # the goal tools' access, continuations (engine.goals)
        # The session's MCP servers (a higher layer runs them); None: no MCP tools.
        self.mcp = mcp

    # Public API ------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.envelope.running

    @property
    def route(self) -> ModelRoute:
        """The model the running turn uses (a one-shot override's), else the session's."""
        turn = self.envelope.current
        return turn.model.route if turn is not None else self._route

    @property
    def client(self) -> LLMClient:
        turn = self.envelope.current
        return turn.model.client if turn is not None else self._client

    @property
    def thinking(self) -> ThinkingLevel:
        turn = self.envelope.current
        return turn.model.thinking if turn is not None else self.settings.thinking

    def configure(
        self,
        *,
        route: ModelRoute | None = None,
        client: LLMClient | None = None,
        thinking: ThinkingLevel | None = None,
        agent: str | None = None,
    ) -> None:
        """Change the model, the thinking level or the agent for the turns to come, without
        reopening the session. While a turn runs the change waits until it ends (the running
        turn keeps what it started with); otherwise it applies at once. `client`: one for
        `route`'s endpoint, which stays the caller's; without it the session keeps its client
        when the endpoint is the same, else opens its own (closed by `aclose`)."""
        if client is not None and route is None:
            raise ValueError("configure: a client comes with the route it speaks to")
        change = ModelChange(route, client, thinking, agent)
        if self.running:
            self._pending.append(change)
        else:
            self._apply(change)

    def _apply(self, change: ModelChange) -> None:
        if change.route is not None:
            client = change.client
            if client is None:
                client = self._client
                if change.route.endpoint != client.endpoint:
                    client = open_client(change.route.endpoint)
                    # Kept open until aclose: a child session may still share the old one.
                    self._owned_clients.append(client)
            self._route, self._client = change.route, client
        if change.thinking is not None:
            self.settings.thinking = change.thinking
        if change.agent is not None:
            self.set_agent(change.agent)

    @property
    def session_cost(self) -> float:
        return self.ledger.session_cost

    @property
    def cost_known(self) -> bool:
        return self.ledger.cost_known

    def interrupt(self) -> None:
        """Stop the current turn: the stream is closed, running tool processes are killed, and
        the turn is recorded as interrupted. Safe to call at any time, from the loop's thread."""
        self.envelope.interrupt()

    def queue_message(self, text: str, when: QueueMode = "step") -> None:
        """Deliver `text` after the running tool calls finish ("step") or after the turn."""
        self.queue.put(text, when)

    @property
    def queued(self) -> tuple[int, int]:
        """How many messages wait: (after the step, after the turn)."""
        return self.queue.counts

    def take_turn_queue(self) -> list[str]:
        return self.queue.take_turn()

    def take_step_queue(self) -> list[str]:
        """Messages queued for "after the step" that a turn ended before delivering."""
        return self.queue.take_step()

    def take_queue(self) -> list[str]:
        """Every message still waiting, in the order they would have run; the queue empties."""
        return self.queue.take_all()

    def next_queued(self) -> str | None:
        """The message to run as the next turn once a turn has ended (see `engine.queue`)."""
        return self.queue.next_turn()

    @property
    def background(self) -> BackgroundProcesses:
        """This session's background bash processes (imported and made on first use)."""
        if self._background is None:
            from xum.tools.background import BackgroundProcesses

            self._background = BackgroundProcesses(str(self.scratch_dir))
            if self.background_hooks is not None:
                self.background_hooks.attach(self._background)
        return self._background

    async def hold_writer(self, purpose: str) -> None:
        """Keep the log's writer lock from now until `aclose` (a front-end that owns this
        workspace for its whole run); without it each turn takes the lock for its duration."""
        await self.recorder.hold_for_session(purpose)

    async def aclose(self) -> None:
        """Release what outlives a turn: background processes are killed, a writer hold is let
        go. The log, client and runtime belong to the caller."""
        try:
            if self._background is not None:
                await self._background.close()
            if self._live is not None:
                self._live.close()
            for client in self._owned_clients:
                await client.aclose()
            self._owned_clients.clear()
        finally:
            self.recorder.close()

    @property
    def offered_tools(self) -> list[str]:
        """The tool names the current segment offers the model."""
        return self._offered

    @property
    def live(self) -> LiveOutputs:
        """This session's live tool output streams (imported and made on first use)."""
        if self._live is None:
            from xum.tools.live import LiveOutputs

            self._live = LiveOutputs(self._emit_tool_output)
        return self._live

    def _emit_tool_output(self, call_id: str, stream: str, text: str) -> None:
        self.emit(E.ToolOutput(call_id=call_id, stream=stream, text=text))

    @property
    def agent_id(self) -> str:
        return self.context.selection.agent_id

    def set_agent(self, agent_id: str) -> None:
        """Switch the agent from the next request on (also mid-turn). With the same tool set the
        new instructions arrive as a change row in the history; with a different one (plan vs
        exec) a new context segment starts, which costs one prompt-cache prefix break."""
        self.context.selection = replace(self.context.selection, agent_id=agent_id)
        self.emit(E.AgentChanged(agent=agent_id))

    def set_mode(self, mode: Literal["exec", "plan"]) -> None:
        """Plan or exec: the built-in agents of those names (or the project's versions)."""
        self.set_agent(mode)

    async def next_request(self) -> LLMRequest:
        """The request the next step would send, with the context frames a step would append
        first (a new segment, a change row). For benchmarks and debugging; not during a turn."""
        frames = await self._context_frames()
        if frames:
            self.recorder.append_now(frames)
        return self._build_request()

    async def run_turn(self, text: str, images: Sequence[ImagePart] = ()) -> TurnResult:
        """One turn. A leading slash command is carried out first (`/<skill> args`, a one-shot
        `/<alias>+<level>` override, `/compact`, `/clear`); a command that cannot be carried
        out raises UsageError before anything is written. A message that would start at or
        above the model's auto-compaction threshold is preceded by a compaction turn. `images`:
        stored images (`xum.store.blobs`) the message carries after its text."""
        return await run_message(self, text, images)

    @asynccontextmanager
    async def turn(
        self, result: TurnResult, kind: TurnKind, override: TurnOverride | None = None
    ) -> AsyncIterator[Turn]:
        """Open a turn in the envelope with the session's model, or `override`'s for this turn
        only. `configure` calls made meanwhile apply once it closes."""
        model = ModelChoice(self._route, self._client, self.settings.thinking)
        try:
            async with self.envelope.open(result, kind, model, override) as turn:
                yield turn
        finally:
            pending, self._pending = self._pending, []
            for change in pending:
                self._apply(change)

    async def agent_turn(
        self,
        text: str,
        *,
        prepared: PreparedMessage | None = None,
        synthetic: ev.SyntheticNote | None = None,
        override: TurnOverride | None = None,
        images: Sequence[ImagePart] = (),
    ) -> TurnResult:
        """One turn of steps. `text` is what the model receives; `prepared`, what a slash
        command made of the message (None for plain text); `synthetic`: the message is xum's,
        not the user's (a goal continuation), recorded as a synthetic row with these fields;
        `override`: another model and thinking level for this turn only; `images`: stored
        images the message carries (refused here, before anything is written, for a model
        that does not take images)."""
        if images:
            check_images(override.route if override is not None else self.route, images)
        said = user_frame(text, prepared, synthetic, images)
        result = TurnResult(turn_id=sortable_id(), reason="completed")
        kind: TurnKind = "continuation" if synthetic is not None else "agent"
        async with self.turn(result, kind, override) as turn:
            self.rules.reset()
            self.calls.doom.reset()
            try:
                # Context changes noticed now go before the user's message.
                context_frames = await self._context_frames()
                start: ev.TurnStartData = {
                    "turn_id": result.turn_id,
                    "model": turn.model.route.model_string,
                }
                await self.recorder.append([ev.spec(ev.TURN_START, start), *context_frames, said])
                async with self.envelope.guarded(turn):
                    await self._steps(result)
            finally:
                live = self.context.live
                result.agent = live.agent.id if live else self.agent_id
                result.plan_file = live.plan_file if live else None
                result.plan_proposed = self.rules.plan_proposed
        return result

    # The loop --------------------------------------------------------------------------------

    async def _steps(self, result: TurnResult) -> None:
        for step in range(1, self.settings.max_steps + 1):
            result.steps = step
            self.envelope.check_interrupt()
            if step > 1:
                if self.compactor.due_mid_turn() and not await self._force_compact(result):
                    return
                frames = await self._context_frames()
                if frames:
                    await self.recorder.append(frames)
            self.compactor.check_fits()
            self.emit(E.StepStart(step=step, turn_id=result.turn_id))
            # Overlaps tool imports (and the step machinery's) with the model's reply; they
            # start once the request is out.
            registry.prewarm(
                self._offered, modules=("xum.engine.toolrun",), gate=first_request_sent
            )
            request = self._build_request(self.rules.tool_choice())
            self.steps.start_step(
                result.turn_id,
                step,
                request,
                model_string=self.route.model_string,
                tools_sha256=self._tools_hash,
                frozen=self.context.frozen,
            )
            state = StreamState()
            try:
                finish = await self.envelope.cancellable(
                    stream_step(
                        self.client,
                        request,
                        state,
                        self.compactor.stream_guard(self.emit),
                        self.log.write_partial,
                        self.ledger.watch(self.route.cost),
                        self._noted_params,
                    )
                )
            except Interrupted:
                self.commits.partial(result, self.route, step, state)
                raise
            except ForceCompaction:
                # The reply pushed the context past threshold + 5%: keep what streamed, compact,
                # and go on from the summary.
                self.commits.partial(result, self.route, step, state, reason="compaction")
                if self.steps.take():  # nothing streamed to keep: the request still goes on record
                    await self.recorder.append(self.steps.take())
                    self.steps.recorded()
                if not await self._force_compact(result):
                    return
                continue
            except BudgetExceeded:
                self.commits.partial(result, self.route, step, state, reason="budget")
                result.reason = "budget"
                return
            except LLMError as exc:  # refused on content-policy grounds: maybe the next model
                if not await self.fallbacks.after_error(result, step, exc):
                    raise
                continue
            if await self.fallbacks.after_reply(result, step, finish):
                continue  # refused: the step again, on the next model of the chain
            calls = await self.commits.reply(result, self.route, step, finish)
            if self.ledger.over_budget():
                self.commits.close_calls(calls, BUDGET_TOOL_OUTPUT)
                result.reason = "budget"
                return
            if not calls:
                if await self._deliver_step_queue():
                    continue
                if self.rules.force_required_tool(self._offered):
                    continue
                return
            stop = self.calls.doom_check(calls)
            if stop is not None:
                self.commits.close_calls(calls, stop)
                result.reason = "doom_loop"
                return
            await self._run_tools(calls)
            await self.rules.snapshot_plan(self.recorder.append)
            await self._deliver_step_queue()
        result.reason = "max_steps"
        self.emit(
            E.Advisory(
                kind="max-steps",
                message=f"the turn reached its limit of {self.settings.max_steps} steps",
            )
        )

    async def _force_compact(self, result: TurnResult) -> bool:
        """Compact inside the turn; False when the budget stopped it (the turn ends)."""
        try:
            await self.compactor.compact_in_turn(result, "force")
        except BudgetExceeded:
            result.reason = "budget"
            return False
        return True

    # Requests --------------------------------------------------------------------------------

    def _can_offer(self, name: str) -> bool:
        """Tools that need something this session lacks are left out of the request."""
        if name == "set_exit_code":
            return self.set_exit_code is not None
        if name in GOAL_TOOLS:
            return self.settings.goals and not self.context.selection.subagent
        if name in ("tool_catalog_search", "mcp_prompt_get", "mcp_resource_read"):
            return self.mcp is not None
        if name == "web_search":  # native or client-side, as config.json `webSearch` says
            return self.route.web_search is not None or self.route.search_tool
        if name == "attach_file":
            return self._images.for_route(self.route) is not None
        if name in HOST_TOOLS or name in CHILD_TOOLS:
            return self.subagents is not None and self.subagents.offers(name)
        if name.startswith("task_"):  # task_await/list/stop also serve background bash
            return self.subagents is None or self.subagents.offers(name)
        return True

    async def _context_frames(self) -> list[FrameSpec]:
        """The frames to append before the next request (a new segment's frozen sections, or a
        change row); see xum.engine.contextsync."""
        frames = await self.context.prepare(
            self.log, self.route.model_string, self._can_offer, self.rules.plan_view
        )
        for message in self.context.new_diagnostics():
            self.emit(E.Advisory(kind="context", message=message))
        self.rules.ensure_plan_dir()
        return frames

    def _use_frozen(self) -> tuple[str, list[ToolSpec]]:
        """The segment's recorded system prompt and tools; the session offers exactly these."""
        self.context.tracker.update(self.log)  # picks up the frames just appended
        frozen = self.context.frozen
        if frozen.tools is not self._tool_specs:
            self._tool_specs = frozen.tools
            self._offered = [t.name for t in frozen.tools]
            self._tools_hash = frozen.tools_sha256
        return frozen.system, frozen.tools

    def _build_request(self, tool_choice: ToolChoice | None = None) -> LLMRequest:
        messages = self.projection.update(self.log)
        system, tools = self._use_frozen()
        tools, native = native_search(tools, self.route.web_search)
        request = LLMRequest(
            model=self.route.model_id,
            system=system,
            messages=messages,
            tools=tools,
            thinking=self.thinking,
            max_output_tokens=self.settings.max_output_tokens,
            tool_choice=tool_choice,
            cache_key=f"xum-{self.workspace.id}",
            params=self.route.params,
            web_search=native,
            images=self._images.for_route(self.route),
        )
        if debug_requested():
            live = self.context.live
            write_debug_request(
                debug_record(
                    request,
                    workspace_id=self.workspace.id,
                    model=self.route.model_string,
                    mode=live.mode if live else self.settings.mode,
                    agent=self.agent_id,
                    offered=self._offered,
                )
            )
        return request

    # Tools -----------------------------------------------------------------------------------

    def tool_env(self) -> dict[str, str]:
        """The environment every command of this session gets over the runtime's own."""
        return self.calls.tool_env()

    def tool_context(self, call: ToolCall | None = None) -> ToolContext:
        """A fresh context for one call (None: a context not tied to a call)."""
        return self.calls.context_for(call, self.tool_env())

    async def _run_tools(self, calls: list[ToolCall]) -> None:
        try:
            await self.envelope.cancellable(self.calls.run(calls))
        except Interrupted:
            self.commits.close_calls(calls, INTERRUPTED_TOOL_OUTPUT)
            raise

    async def _deliver_step_queue(self) -> bool:
        queued = self.queue.take_step()
        if not queued:
            return False
        await self.recorder.append(
            [
                ev.spec(ev.USER_MESSAGE, {"message": text_message("user", text), "queued": True})
                for text in queued
            ]
        )
        return True
