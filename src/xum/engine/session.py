"""AgentSession: the turn loop of one workspace.

A turn: record the user message, then repeat steps until the model stops calling tools: build
the request from the log's projection, stream the reply (deltas become events), commit the
assistant message, run its tool calls, record each result. The writer lock is held for the whole
turn, so another process cannot interleave frames. Whatever ends the turn (completion, Ctrl-C,
a provider error, the budget, the step limit, a doom loop) it ends with a durable `turn_end`, and
every tool call in the log has a result: the provider history stays valid.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import traceback
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import orjson

from xum.context.files import RuntimeFiles
from xum.context.plan import read_snapshot
from xum.context.workspace import (
    AgentSelection,
    ContextProvider,
    StaticContext,
    WorkspaceContext,
)
from xum.core.ids import sortable_id
from xum.core.paths import ensure_private_dir, logs_dir
from xum.engine import events as E
from xum.engine.contextsync import ContextSync
from xum.engine.doomloop import DoomLoopGuard
from xum.engine.events import Event, EventSink, null_sink
from xum.engine.middleware import ToolCall, ToolMiddleware
from xum.engine.replay import header_key, request_shape
from xum.engine.route import ModelRoute, resolve_route
from xum.engine.stream import StreamState, stream_step
from xum.llm.client import LLMClient, open_client
from xum.llm.errors import LLMError
from xum.llm.types import (
    Finish,
    LLMRequest,
    Message,
    ThinkingLevel,
    ToolChoice,
    ToolSpec,
    Usage,
    UsageUpdate,
    text_message,
)
from xum.runtime.base import Runtime, RuntimeKind
from xum.store import events as ev
from xum.store.frames import Frame
from xum.store.projection import HistoryProjection
from xum.store.sessionlog import SessionLog
from xum.tools import registry
from xum.tools.tasking import CHILD_TOOLS, HOST_TOOLS, SubAgentHost

if TYPE_CHECKING:
    # Imported where they are used, off the start-up path: the tool machinery with the first
    # tool call (the tool prewarm thread loads it while the first reply streams), the user-input
    # helpers with the first slash command.
    from xum.engine.userinput import PreparedMessage, TurnOverride
    from xum.tools.background import BackgroundProcesses
    from xum.tools.base import AskUser, SkillAccess, TodoItem, ToolContext, ToolResult
    from xum.tools.live import LiveOutputs

T = TypeVar("T")
FrameSpec = tuple[str, dict[str, Any]]

TurnReason = Literal["completed", "interrupted", "error", "budget", "max_steps", "doom_loop"]
QueueMode = Literal["step", "turn"]

INTERRUPTED_TOOL_OUTPUT = "interrupted: the user stopped the turn before this tool finished"
# A turn whose agent requires a tool (`tools.require`) and ends without calling it gets up to
# this many extra steps that force the call through the request's tool_choice.
MAX_FORCED_STEPS = 2
PLAN_EDIT_TOOLS = frozenset(
    {"file_edit_replace_string", "file_edit_replace_lines", "file_edit_insert"}
)
BUDGET_TOOL_OUTPUT = "not run: the session budget was exceeded, so the turn stopped"
INTERNAL_ERROR_TOOL_OUTPUT = "not finished: the turn stopped on an internal error in xum"


_LOG_EXECUTOR: ThreadPoolExecutor | None = None


def _log_executor() -> ThreadPoolExecutor:
    """Threads for durable log appends, shared by every session of the process (fsync releases
    the GIL, and parallel syncs let the filesystem commit them together)."""
    global _LOG_EXECUTOR
    if _LOG_EXECUTOR is None:
        _LOG_EXECUTOR = ThreadPoolExecutor(max_workers=8, thread_name_prefix="xum-log")
    return _LOG_EXECUTOR


class _Interrupted(Exception):
    """Raised inside the loop when the user asked to stop."""


class _BudgetExceeded(Exception):
    """Raised mid-stream once the usage reported so far already exceeds the budget."""


@dataclass(frozen=True)
class WorkspaceInfo:
    """The workspace a session runs in."""

    id: str
    name: str
    project_path: str
    path: str  # the workspace directory (in the runtime's namespace)
    runtime: RuntimeKind


@dataclass
class SessionSettings:
    """How a session runs: model settings, limits, mode."""

    # A fixed prompt and tool list, used when the session has no context provider (tests and
    # embedded uses); with one, the agent definition and the workspace decide both.
    system_prompt: str = ""
    tools: list[str] = field(default_factory=list)  # the tool names offered to the model
    thinking: ThinkingLevel = "medium"
    budget_usd: float | None = None
    max_steps: int = 200
    max_output_tokens: int | None = None
    mode: str = "exec"


@dataclass
class TurnResult:
    """How a turn ended, and what it cost."""

    turn_id: str
    reason: TurnReason
    text: str = ""  # the last assistant text of the turn
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = 0.0  # None: some reply had no known price
    steps: int = 0
    error: dict[str, str] | None = None
    agent: str = ""  # the agent that ran the turn
    plan_file: str | None = None  # plan mode: where the plan is
    plan_proposed: bool = False  # plan mode: propose_plan presented it during the turn


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def message_text(message: Message) -> str:
    return "".join(p["text"] for p in message["content"] if p["type"] == "text")


def _tool_calls(message: Message) -> list[ToolCall]:
    return [
        ToolCall(p["id"], p["name"], p["arguments"])
        for p in message["content"]
        if p["type"] == "tool_call"
    ]


def _public_message(message: Message) -> dict[str, Any]:
    """The assistant message for events: text, reasoning and calls, without replay state."""
    return {
        "text": message_text(message),
        "reasoning": "".join(p["text"] for p in message["content"] if p["type"] == "reasoning"),
        "tool_calls": [
            {"id": c.id, "name": c.name, "arguments": c.arguments} for c in _tool_calls(message)
        ],
    }


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
    ) -> None:
        self.workspace = workspace
        self.log = log
        self.runtime = runtime
        self.route = route
        self.client = client
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
        # Live tool output (`tool-output` events), coalesced and bounded per stream.
        self._live: LiveOutputs | None = None  # made with the first tool call
        # What the log says so far: the task list as last written, the cost, the last header.
        resumed = _resume(log.frames)
        self.todos: list[TodoItem] = resumed.todos
        self.projection = HistoryProjection()
        self.doom = DoomLoopGuard()
        self._step_queue: list[str] = []
        self._turn_queue: list[str] = []
        self._task: asyncio.Task[Any] | None = None
        self._pending_advisories: dict[str, str] = {}
        self._interrupt_requested = False
        self._running = False
        self.session_cost, self.cost_known = resumed.cost, resumed.cost_known
        self._header_key = resumed.header_key
        # The step_start (and request_header) of the step in flight: written with its reply, or
        # with the turn_end when the step produced none, so every request sent is on record.
        self._pending_step: list[FrameSpec] = []
        self._pending_key: bytes | None = None  # the key of its request_header, if it has one
        self._tool_specs: list[ToolSpec] = []
        self._offered: list[str] = []
        self._set_tools(settings.tools)
        # What the model is told: the agent, the workspace's instructions and skills, frozen
        # per context segment (see xum.engine.contextsync and xum.context.frozen).
        self.context = ContextSync(
            context or StaticContext(settings.system_prompt, settings.tools),
            agent or AgentSelection(),
        )
        self.ask_user = ask_user
        if skills is None and isinstance(context, WorkspaceContext):
            skills = context.skill_access()
        self.skills = skills
        self.resolve_model = resolve_model or resolve_route
        self._plan_view = RuntimeFiles(runtime)
        self._required_done = False
        self._forced_steps = 0
        self._force_next = False
        self._plan_edits: list[str | None] = []  # plan-file paths touched this step
        self._plan_proposed = False

    # Public API ------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._running

    def interrupt(self) -> None:
        """Stop the current turn: the stream is closed, running tool processes are killed, and
        the turn is recorded as interrupted. Safe to call at any time, from the loop's thread."""
        if not self._running:
            return
        self._interrupt_requested = True
        if self._task is not None and not self._task.done():
            self._task.cancel()

    def queue_message(self, text: str, when: QueueMode = "step") -> None:
        """Deliver `text` after the running tool calls finish ("step") or after the turn."""
        (self._step_queue if when == "step" else self._turn_queue).append(text)

    def take_turn_queue(self) -> list[str]:
        queued, self._turn_queue = self._turn_queue, []
        return queued

    def take_step_queue(self) -> list[str]:
        """Messages queued for "after the step" that a turn ended before delivering."""
        queued, self._step_queue = self._step_queue, []
        return queued

    @property
    def background(self) -> BackgroundProcesses:
        """This session's background bash processes (imported and made on first use)."""
        if self._background is None:
            from xum.tools.background import BackgroundProcesses

            self._background = BackgroundProcesses(str(self.scratch_dir))
        return self._background

    async def aclose(self) -> None:
        """Release what outlives a turn: background processes are killed. The log, client and
        runtime belong to the caller."""
        if self._background is not None:
            await self._background.close()
        if self._live is not None:
            self._live.close()

    @property
    def agent_id(self) -> str:
        return self.context.selection.agent_id

    def set_agent(self, agent_id: str) -> None:
        """Switch the agent from the next request on (also mid-turn). With the same tool set the
        new instructions arrive as a change row in the history; with a different one (plan vs
        exec) a new context segment starts, which costs one prompt-cache prefix break."""
        self.context.selection = replace(self.context.selection, agent_id=agent_id)
        self.emit({"type": E.AGENT_CHANGED, "agent": agent_id})

    def set_mode(self, mode: Literal["exec", "plan"]) -> None:
        """Plan or exec: the built-in agents of those names (or the project's versions)."""
        self.set_agent(mode)

    async def next_request(self) -> LLMRequest:
        """The request the next step would send, with the context frames a step would append
        first (a new segment, a change row). For benchmarks and debugging; not during a turn."""
        frames = await self._context_frames()
        if frames:
            self._context_events(frames, self.log.append_many(frames))
        return self._build_request()

    async def run_turn(self, text: str) -> TurnResult:
        """One turn. A leading slash command is carried out first (`/<skill> args`, a one-shot
        `/<alias>+<level>` override); a command that cannot be carried out raises UsageError
        before anything is written."""
        if not text.lstrip().startswith("/"):
            return await self._run_turn(text)
        from xum.engine.userinput import prepare_message  # slash commands only: off start-up

        prepared = prepare_message(
            text,
            skills=await self.context.provider.skill_catalog(),
            route=self.route,
            thinking=self.settings.thinking,
            resolve_model=self.resolve_model,
        )
        if prepared.override is None:
            return await self._run_turn(prepared.text, prepared)
        turn = self._run_turn(prepared.text, prepared)
        return await self._with_override(prepared.override, turn)

    async def _with_override(
        self, override: TurnOverride, turn: Coroutine[Any, Any, TurnResult]
    ) -> TurnResult:
        saved = (self.route, self.client, self.settings.thinking)
        own_client = override.route.endpoint != self.route.endpoint
        client = open_client(override.route.endpoint) if own_client else self.client
        self.route, self.client, self.settings.thinking = override.route, client, override.thinking
        try:
            return await turn
        finally:
            self.route, self.client, self.settings.thinking = saved
            if own_client:
                await client.aclose()

    async def _run_turn(self, text: str, prepared: PreparedMessage | None = None) -> TurnResult:
        """`text` is what the model receives; `prepared`, what a slash command made of the
        message (None for plain text)."""
        # A slash command's message keeps what was typed and what the command was.
        slash_fields: dict[str, Any] = (
            {}
            if prepared is None or prepared.slash is None
            else {"typed": prepared.typed, "slash": prepared.slash}
        )
        result = TurnResult(turn_id=sortable_id(), reason="completed")
        self._running = True
        self._interrupt_requested = False
        self._pending_step, self._pending_key = [], None
        self._required_done = False
        self._forced_steps = 0
        self._force_next = False
        self._plan_proposed = False
        self.doom.reset()
        # Off the loop: other sessions (the server's, a parent's) share it.
        await self.log.begin_write_off_loop(f"turn {result.turn_id}")
        try:
            # Context changes noticed now go before the user's message.
            context_frames = await self._context_frames()
            user: dict[str, Any] = {"message": text_message("user", text), **slash_fields}
            frames = await self._append(
                [
                    (ev.TURN_START, {"turn_id": result.turn_id}),
                    *context_frames,
                    (ev.USER_MESSAGE, user),
                ]
            )
            self._emit(
                E.TURN_START, frames[0], turn_id=result.turn_id, model=self.route.model_string
            )
            self._context_events(context_frames, frames[1:-1])
            self._emit(E.USER_MESSAGE, frames[-1], text=text, **slash_fields)
            try:
                await self._steps(result)
            except _Interrupted:
                result.reason = "interrupted"
            except LLMError as exc:
                result.reason = "error"
                result.error = exc.to_dict()
                self.emit({"type": E.ERROR, **exc.to_dict()})
            except asyncio.CancelledError:
                # Cancelled from outside (not by interrupt()): still close the turn durably.
                self._close_turn_now(result, "interrupted", INTERRUPTED_TOOL_OUTPUT)
                raise
            except Exception as exc:
                # A bug (in xum, a middleware, an event sink): the turn ends as an error, and the
                # log stays valid for the next turn. If even that cannot be written, the original
                # error goes up.
                self._fail_turn(result, exc)
                return result
            await self._end_turn_async(result, result.reason)
            return result
        finally:
            live = self.context.live
            result.agent = live.agent.id if live else self.agent_id
            result.plan_file = live.plan_file if live else None
            result.plan_proposed = self._plan_proposed
            self._running = False
            self._task = None
            self.log.end_write()

    # The loop --------------------------------------------------------------------------------

    async def _steps(self, result: TurnResult) -> None:
        for step in range(1, self.settings.max_steps + 1):
            result.steps = step
            self._check_interrupt()
            if step > 1:
                frames = await self._context_frames()
                if frames:
                    self._context_events(frames, await self._append(frames))
            self.emit({"type": E.STEP_START, "step": step, "turn_id": result.turn_id})
            registry.prewarm(self._offered)  # overlaps tool imports with the model's reply
            request = self._build_request(self._tool_choice())
            self._pending_step, self._pending_key = self._step_frames(result.turn_id, step, request)
            state = StreamState()
            try:
                finish = await self._cancellable(
                    stream_step(
                        self.client,
                        request,
                        state,
                        self.emit,
                        self.log.write_partial,
                        self._budget_watch(result),
                    )
                )
            except _Interrupted:
                self._commit_partial(result, step, state)
                raise
            except _BudgetExceeded:
                self._commit_partial(result, step, state, reason="budget")
                result.reason = "budget"
                return
            calls = await self._commit_reply(result, step, finish)
            if self._over_budget():
                self._close_calls(calls, BUDGET_TOOL_OUTPUT)
                result.reason = "budget"
                return
            if not calls:
                if await self._deliver_step_queue():
                    continue
                if self._force_required_tool():
                    continue
                return
            stop = self._doom_check(calls)
            if stop is not None:
                self._close_calls(calls, stop)
                result.reason = "doom_loop"
                return
            await self._run_tools(calls)
            await self._snapshot_plan()
            await self._deliver_step_queue()
        result.reason = "max_steps"
        self.emit(
            {
                "type": E.ADVISORY,
                "kind": "max-steps",
                "message": f"the turn reached its limit of {self.settings.max_steps} steps",
            }
        )

    def _check_interrupt(self) -> None:
        if self._interrupt_requested:
            raise _Interrupted()

    async def _cancellable(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run `coro` so that interrupt() can cancel it. An interrupt that arrived while nothing
        was cancellable (a reply being committed, a result being written) is honoured here,
        before the stream or the tools start."""
        if self._interrupt_requested:
            coro.close()
            raise _Interrupted()
        task: asyncio.Task[T] = asyncio.ensure_future(coro)
        self._task = task
        try:
            return await task
        except asyncio.CancelledError:
            if self._interrupt_requested:
                raise _Interrupted() from None
            raise
        finally:
            self._task = None

    # Requests --------------------------------------------------------------------------------

    def _set_tools(self, names: Sequence[str]) -> None:
        offered = [n for n in names if self._can_offer(n)]
        self._offered = offered
        self._tool_specs = [ToolSpec(**registry.tool_schema(n)) for n in offered]
        self._tools_hash = _sha256(
            orjson.dumps([(t.name, t.description, t.parameters) for t in self._tool_specs])
        )

    def _can_offer(self, name: str) -> bool:
        """Tools that need something this session lacks are left out of the request."""
        if name == "set_exit_code":
            return self.set_exit_code is not None
        if name in HOST_TOOLS or name in CHILD_TOOLS:
            return self.subagents is not None and self.subagents.offers(name)
        if name.startswith("task_"):  # task_await/list/stop also serve background bash
            return self.subagents is None or self.subagents.offers(name)
        return True

    async def _context_frames(self) -> list[tuple[str, dict[str, Any]]]:
        """The frames to append before the next request (a new segment's frozen sections, or a
        change row); see xum.engine.contextsync."""
        frames = await self.context.prepare(
            self.log, self.route.model_string, self._can_offer, self._plan_view
        )
        for message in self.context.new_diagnostics():
            self.emit({"type": E.ADVISORY, "kind": "context", "message": message})
        live = self.context.live
        if live is not None and live.plan_file and self.runtime.kind in ("local", "worktree"):
            # The plan lives under $XUM_ROOT, which stays private (0700).
            parent = Path(live.plan_file).parent
            if not parent.is_dir():
                ensure_private_dir(parent.parent)
                ensure_private_dir(parent)
        return frames

    def _context_events(
        self, specs: Sequence[tuple[str, dict[str, Any]]], frames: Sequence[Frame]
    ) -> None:
        for (kind, data), frame in zip(specs, frames, strict=True):
            if kind == ev.CONTEXT_FROZEN:
                self._emit(
                    E.CONTEXT_FROZEN,
                    frame,
                    reason=data["reason"],
                    agent=data["agent"],
                    mode=data["mode"],
                    tools=[t["name"] for t in data["tools"]],
                )
            elif kind == ev.SYNTHETIC_MESSAGE:
                self._emit(
                    E.USER_MESSAGE,
                    frame,
                    text=data["message"]["content"][0]["text"],
                    synthetic=True,
                    kind=data.get("kind"),
                    changed=data.get("changed", []),
                )

    def _use_frozen(self) -> tuple[str, list[ToolSpec]]:
        """The segment's recorded system prompt and tools; the session offers exactly these."""
        self.context.tracker.update(self.log)  # picks up the frames just appended
        frozen = self.context.frozen
        if frozen.tools is not self._tool_specs:
            self._tool_specs = frozen.tools
            self._offered = [t.name for t in frozen.tools]
            self._tools_hash = frozen.tools_sha256
        return frozen.system, frozen.tools

    def _tool_choice(self) -> ToolChoice | None:
        """Force the agent's required tool on a step added because the turn was about to end
        without it (see _force_required_tool)."""
        live = self.context.live
        force, self._force_next = self._force_next, False
        if force and not self._required_done and live and live.required_tool:
            return {"name": live.required_tool}
        return None

    def _force_required_tool(self) -> bool:
        """The model stopped without calling the agent's required tool: add a forced step."""
        live = self.context.live
        required = live.required_tool if live else None
        if required is None or self._required_done or required not in self._offered:
            return False
        if self._forced_steps >= MAX_FORCED_STEPS:
            return False
        self._forced_steps += 1
        self._force_next = True
        return True

    def _build_request(self, tool_choice: ToolChoice | None = None) -> LLMRequest:
        messages = self.projection.update(self.log)
        system, tools = self._use_frozen()
        request = LLMRequest(
            model=self.route.model_id,
            system=system,
            messages=messages,
            tools=tools,
            thinking=self.settings.thinking,
            max_output_tokens=self.settings.max_output_tokens,
            tool_choice=tool_choice,
            cache_key=f"xum-{self.workspace.id}",
            params=self.route.params,
        )
        if os.environ.get("XUM_DEBUG_LLM_REQUEST") == "1":
            self._debug_request(request)
        return request

    def _step_frames(
        self, turn_id: str, step: int, request: LLMRequest
    ) -> tuple[list[FrameSpec], bytes | None]:
        """The frames that put this step's request on record: step_start (with the forced
        tool_choice, if any) and a request_header when anything else that shapes the request
        changed since the last one (with the header's key; None without one).
        `xum.engine.replay.rebuild_requests` reads them back."""
        start: dict[str, Any] = {"turn_id": turn_id, "step": step}
        if request.tool_choice is not None:
            start["tool_choice"] = request.tool_choice
        frames: list[FrameSpec] = [(ev.STEP_START, start)]
        shape = request_shape(request, self.route.model_string, self._tools_hash)
        key = header_key(shape)
        if key == self._header_key:
            return frames, None
        frozen = self.context.frozen
        if (frozen.system_sha256, frozen.tools_sha256) == (
            shape["system_sha256"],
            shape["tools_sha256"],
        ):
            # The texts are in the segment's context_frozen frame already; point at it.
            body: dict[str, Any] = {"frozen_seq": frozen.seq}
        else:
            body = {
                "system": request.system,
                "tools": [
                    {"name": t.name, "description": t.description, "parameters": t.parameters}
                    for t in request.tools
                ],
            }
        frames.append((ev.REQUEST_HEADER, {**shape, **body}))
        return frames, key

    def _step_recorded(self) -> None:
        """The in-flight step's frames were appended: remember the header they carried."""
        if self._pending_key is not None:
            self._header_key = self._pending_key
        self._pending_step, self._pending_key = [], None

    def _debug_request(self, request: LLMRequest) -> None:
        """XUM_DEBUG_LLM_REQUEST=1: append the whole request (never a key) to the debug log."""
        path = ensure_private_dir(logs_dir()) / "llm-requests.log"
        record = {
            "workspaceId": self.workspace.id,
            "model": self.route.model_string,
            "systemMessage": request.system,
            "messages": request.messages,
            "tools": [
                {"name": t.name, "description": t.description, "inputSchema": t.parameters}
                for t in request.tools
            ],
            "providerOptions": {"thinking": request.thinking, "params": request.params},
            "mode": self.context.live.mode if self.context.live else self.settings.mode,
            "agent": self.agent_id,
            "toolChoice": request.tool_choice,
            "thinkingLevel": request.thinking,
            "maxOutputTokens": request.max_output_tokens,
            "toolPolicy": self._offered,
        }
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, orjson.dumps(record, option=orjson.OPT_INDENT_2) + b"\n")
        finally:
            os.close(fd)

    # Committing ------------------------------------------------------------------------------

    async def _append(self, batch: Sequence[tuple[str, dict[str, Any]]]) -> list[Frame]:
        """A durable append (write, fdatasync, manifest) on a worker thread, so that one
        session's disk syncs do not stall every other session sharing the event loop. This
        session still waits for it; a cancellation takes effect once the write is done (it cannot
        be abandoned half-way, and the log has one writer at a time)."""
        future = asyncio.get_running_loop().run_in_executor(
            _log_executor(), self.log.append_many, batch
        )
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            while not future.done():
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.shield(future)
            raise

    async def _commit_reply(
        self,
        result: TurnResult,
        step: int,
        finish: Finish,
    ) -> list[ToolCall]:
        cost = self.route.cost(finish.usage)
        data = {
            "message": finish.message,
            "usage": finish.usage.to_dict(),
            "finish_reason": finish.reason,
            "raw_finish_reason": finish.raw_reason,
            "model": self.route.model_string,
            "cost_usd": cost,
            "step": step,
        }
        frames = await self._append([*self._pending_step, (ev.ASSISTANT_MESSAGE, data)])
        self._step_recorded()
        self.log.delete_partial()
        self._account(result, finish.usage, cost)
        text = message_text(finish.message)
        if text:
            result.text = text
        self._emit(
            E.ASSISTANT_MESSAGE,
            frames[-1],
            **_public_message(finish.message),
            finish_reason=finish.reason,
            usage=finish.usage.to_dict(),
            cost_usd=cost,
            step=step,
        )
        return _tool_calls(finish.message)

    def _commit_partial(
        self,
        result: TurnResult,
        step: int,
        state: StreamState,
        reason: str = "interrupted",
    ) -> None:
        """Keep what streamed before an interrupt or a budget stop: its text (incomplete tool
        calls and unsigned reasoning cannot be replayed, so they are dropped) and the usage the
        provider reported so far, which is billed even when no text arrived. With nothing to
        keep, the step's frames go out with the turn_end instead."""
        self.log.delete_partial()
        text = "".join(state.text)
        usage = state.last_usage.usage if state.last_usage else Usage()
        if not text and not usage.input_tokens and not usage.output_tokens:
            return
        message: Message = (
            text_message("assistant", text) if text else {"role": "assistant", "content": []}
        )
        cost = self.route.cost(usage)
        reply = {
            "message": message,
            "usage": usage.to_dict(),
            "finish_reason": reason,
            "model": self.route.model_string,
            "cost_usd": cost,
            "step": step,
        }
        frames = self.log.append_many([*self._pending_step, (ev.ASSISTANT_MESSAGE, reply)])
        self._step_recorded()
        self._account(result, usage, cost)
        if text:
            result.text = text
        self._emit(
            E.ASSISTANT_MESSAGE,
            frames[-1],
            **_public_message(message),
            finish_reason=reason,
            usage=usage.to_dict(),
            cost_usd=cost,
            step=step,
        )

    def _account(self, result: TurnResult, usage: Usage, cost: float | None) -> None:
        result.usage.add(usage)
        if cost is None:
            result.cost_usd = None
            self.cost_known = False
        else:
            if result.cost_usd is not None:
                result.cost_usd += cost
            self.session_cost += cost
        if self.subagents is not None:
            self.subagents.note_cost(self.session_cost)
        self.emit(
            {
                "type": E.USAGE,
                "turn": result.usage.to_dict(),
                "turn_cost_usd": result.cost_usd,
                "session_cost_usd": self.session_cost if self.cost_known else None,
            }
        )

    @staticmethod
    def _result_frame(call: ToolCall, result: ToolResult, seconds: float) -> FrameSpec:
        message = ev.tool_result_message(
            call.id, call.name, result.output, is_error=result.is_error
        )
        return ev.TOOL_RESULT, {
            "message": message,
            "meta": result.meta,
            "duration_s": round(seconds, 4),
        }

    async def _record_result(self, call: ToolCall, result: ToolResult, seconds: float) -> None:
        (frame,) = await self._append([self._result_frame(call, result, seconds)])
        self._emit_result(frame, call, result, seconds)

    def _emit_result(
        self, frame: Frame, call: ToolCall, result: ToolResult, seconds: float
    ) -> None:
        self._emit(
            E.TOOL_RESULT,
            frame,
            call_id=call.id,
            name=call.name,
            is_error=result.is_error,
            output=result.output,
            meta=result.meta,
            duration_s=round(seconds, 4),
        )

    def _closing_frames(
        self, calls: Sequence[ToolCall], output: str
    ) -> tuple[ToolResult, list[FrameSpec]]:
        """The error result (`output`) for calls that never ran, and the frames that give it
        to each of `calls`."""
        from xum.tools.base import ToolResult

        closing = ToolResult(output=output, is_error=True)
        return closing, [self._result_frame(call, closing, 0.0) for call in calls]

    def _close_calls(self, calls: Sequence[ToolCall], output: str) -> None:
        """Give every call that has no result yet an error result saying why it did not run,
        in one batch."""
        done = self._answered_call_ids()
        open_calls = [call for call in calls if call.id not in done]
        if not open_calls:
            return
        closing, batch = self._closing_frames(open_calls, output)
        frames = self.log.append_many(batch)
        for call, frame in zip(open_calls, frames, strict=True):
            self._emit_result(frame, call, closing, 0.0)

    def _answered_call_ids(self) -> set[str]:
        answered: set[str] = set()
        for frame in reversed(self.log.frames):
            if frame.type == ev.ASSISTANT_MESSAGE:
                break
            if frame.type == ev.TOOL_RESULT:
                for part in frame.data["message"]["content"]:
                    if part["type"] == "tool_result":
                        answered.add(part["call_id"])
        return answered

    def _unanswered_calls(self) -> list[ToolCall]:
        """The calls of this turn's last reply that have no result in the log yet."""
        for frame in reversed(self.log.frames):
            if frame.type == ev.TURN_START:
                return []
            if frame.type == ev.ASSISTANT_MESSAGE and not frame.damaged:
                done = self._answered_call_ids()
                return [c for c in _tool_calls(frame.data["message"]) if c.id not in done]
        return []

    async def _end_turn_async(self, result: TurnResult, reason: TurnReason) -> None:
        # A step that ended without a reply (a provider error, an early interrupt) is recorded
        # here, so that the request it sent is on record too.
        step = self._pending_step
        if step:
            self.log.delete_partial()
        frames = await self._append([*step, self._turn_end_frame(result, reason)])
        self._step_recorded()
        self._emit_turn_end(frames[-1], result, reason)

    def _close_turn_now(self, result: TurnResult, reason: TurnReason, output: str) -> None:
        """End a turn that broke off (cancelled from outside, or an unexpected error) without
        awaiting anything: in one batch, the step in flight, an error result (`output`) for
        every call still without one, and the turn_end. Events go out after the write; a
        failing event sink cannot undo it."""
        calls = self._unanswered_calls()
        closing, results = self._closing_frames(calls, output)
        step = self._pending_step
        self.log.delete_partial()
        frames = self.log.append_many([*step, *results, self._turn_end_frame(result, reason)])
        self._step_recorded()
        for call, frame in zip(calls, frames[len(step) : -1], strict=True):
            with contextlib.suppress(Exception):
                self._emit_result(frame, call, closing, 0.0)
        with contextlib.suppress(Exception):
            self._emit_turn_end(frames[-1], result, reason)

    def _fail_turn(self, result: TurnResult, exc: Exception) -> None:
        """The last-resort end of a turn that raised something unexpected."""
        where = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
        location = (
            f" (at {where[0].filename}:{where[0].lineno} in {where[0].name})" if where else ""
        )
        result.reason = "error"
        result.error = {
            "code": "internal_error",
            "kind": "internal",
            "message": f"the turn stopped on an unexpected error: {type(exc).__name__}: {exc}"
            + location,
            "hint": "this is a bug in xum or in an extension it runs (a hook, middleware or "
            "event consumer); the session log is intact and a new turn can continue; please "
            "report the message above",
        }
        try:
            self._close_turn_now(result, "error", INTERNAL_ERROR_TOOL_OUTPUT)
        except Exception as write_error:
            exc.add_note(
                f"closing the turn failed too: {type(write_error).__name__}: {write_error}"
            )
            raise exc from exc.__cause__
        with contextlib.suppress(Exception):
            self.emit({"type": E.ERROR, **result.error})

    @staticmethod
    def _turn_end_frame(result: TurnResult, reason: TurnReason) -> FrameSpec:
        data: dict[str, Any] = {
            "turn_id": result.turn_id,
            "reason": reason,
            "usage": result.usage.to_dict(),
            "cost_usd": result.cost_usd,
            "steps": result.steps,
        }
        if result.error:
            data["error"] = result.error
        return ev.TURN_END, data

    def _emit_turn_end(self, frame: Frame, result: TurnResult, reason: TurnReason) -> None:
        self._emit(
            E.TURN_END,
            frame,
            turn_id=result.turn_id,
            reason=reason,
            usage=result.usage.to_dict(),
            cost_usd=result.cost_usd,
            steps=result.steps,
            error=result.error,
        )

    def _emit(self, event_type: str, frame: Frame, **fields: Any) -> None:
        event: Event = {"type": event_type, "seq": frame.seq}
        event.update(fields)
        self.emit(event)

    # Tools -----------------------------------------------------------------------------------

    @property
    def live(self) -> LiveOutputs:
        """This session's live tool output streams (imported and made on first use)."""
        if self._live is None:
            from xum.tools.live import LiveOutputs

            self._live = LiveOutputs(self._emit_tool_output)
        return self._live

    def _emit_tool_output(self, call_id: str, stream: str, text: str) -> None:
        self.emit({"type": "tool-output", "call_id": call_id, "stream": stream, "text": text})

    def tool_context(self, call_id: str = "") -> ToolContext:
        """A fresh context for one call (live output only for a real call id)."""
        from xum.tools.base import ToolContext

        live = self.context.live
        env = dict(self.base_env)
        env.update(
            {
                "XUM_PROJECT_PATH": self.workspace.project_path,
                "XUM_RUNTIME": self.workspace.runtime,
                "XUM_WORKSPACE_NAME": self.workspace.name,
                "XUM_WORKSPACE_ID": self.workspace.id,
                "XUM_MODEL_STRING": self.route.model_string,
                "XUM_THINKING_LEVEL": self.settings.thinking,
                "XUM_COSTS_USD": f"{self.session_cost + self._tree_cost():.2f}",
                "XUM_SCRATCH_DIR": str(self.scratch_dir),
            }
        )
        return ToolContext(
            call_id=call_id,
            open_output=self.live.opener(call_id) if call_id else None,
            runtime=self.runtime,
            workspace_id=self.workspace.id,
            workspace_name=self.workspace.name,
            project_path=self.workspace.project_path,
            scratch_dir=str(self.scratch_dir),
            env=env,
            todos=self.todos,
            set_exit_code=self.set_exit_code,
            subagents=self.subagents,
            # Background bash needs task_await to be read; without it, it is not offered.
            background=self.background if "task_await" in self._offered else None,
            plan_file=live.plan_file if live else None,
            ask_user=self.ask_user,
            skills=self.skills,
            spawnable_agents=live.policy.spawnable_agents if live else None,
        )

    async def _run_tools(self, calls: list[ToolCall]) -> None:
        from xum.engine.toolrun import run_calls

        def started(call: ToolCall) -> None:
            self.emit(
                {
                    "type": E.TOOL_CALL,
                    "call_id": call.id,
                    "name": call.name,
                    "arguments": _parsed_or_raw(call.arguments),
                }
            )

        try:
            await self._cancellable(
                run_calls(
                    calls,
                    lambda call: self.tool_context(call.id),
                    offered=self._offered,
                    middleware=self.middleware,
                    on_start=started,
                    on_result=self._with_advisories(),
                )
            )
        except _Interrupted:
            self._close_calls(calls, INTERRUPTED_TOOL_OUTPUT)
            raise

    def _with_advisories(self) -> Callable[[ToolCall, ToolResult, float], Awaitable[None]]:
        advisories = self._pending_advisories

        async def record(call: ToolCall, result: ToolResult, seconds: float) -> None:
            note = advisories.pop(call.id, None)
            if note is not None:
                result.output = f"{result.output}\n\n{note}"
                self.emit(
                    {"type": E.ADVISORY, "kind": "doom-loop", "call_id": call.id, "message": note}
                )
            await self._record_result(call, result, seconds)
            self._note_result(call, result)

        return record

    def _note_result(self, call: ToolCall, result: ToolResult) -> None:
        """Bookkeeping for plan mode and required tools after each tool result."""
        if result.is_error:
            return
        live = self.context.live
        if live is not None and call.name == live.required_tool:
            self._required_done = True
        if call.name in PLAN_EDIT_TOOLS and isinstance(result.meta.get("path"), str):
            self._plan_edits.append(result.meta["path"])
        elif call.name == "propose_plan" and isinstance(result.meta.get("plan"), dict):
            self._plan_proposed = True
            self._plan_edits.append(None)
            plan = result.meta["plan"]
            self.emit(
                {
                    "type": E.PLAN_PROPOSED,
                    "call_id": call.id,
                    "path": plan.get("path"),
                    "content": plan.get("content"),
                    "mtime_ns": plan.get("mtime_ns"),
                }
            )

    async def _snapshot_plan(self) -> None:
        """After a step that edited or proposed the plan: record the plan as the model now knows
        it, so the next request does not mistake the model's own edit for an outside one."""
        touched, self._plan_edits = self._plan_edits, []
        if not touched:
            return
        live = self.context.live
        known = self.context.tracker.plan
        target = live.plan_file if live and live.plan_file else known.path if known else None
        if target is None:
            return
        real = await self.runtime.realpath(target)
        if not any(path is None or path == real for path in touched):
            return
        snapshot = await read_snapshot(self._plan_view, target)
        if self.context.snapshot_due(snapshot):
            await self._append([(ev.PLAN_SNAPSHOT, snapshot.to_dict())])

    def _doom_check(self, calls: Sequence[ToolCall]) -> str | None:
        """Advisories for repeated identical calls; the stop message when the guard trips."""
        self._pending_advisories.clear()
        for call in calls:
            verdict = self.doom.observe(call.name, call.arguments)
            if verdict.stop:
                assert verdict.advisory is not None
                self.emit(
                    {"type": E.ADVISORY, "kind": "doom-loop-stop", "message": verdict.advisory}
                )
                return verdict.advisory
            if verdict.advisory is not None:
                self._pending_advisories[call.id] = verdict.advisory
        return None

    async def _deliver_step_queue(self) -> bool:
        if not self._step_queue:
            return False
        queued, self._step_queue = self._step_queue, []
        frames = await self._append(
            [(ev.USER_MESSAGE, {"message": text_message("user", text)}) for text in queued]
        )
        for frame, text in zip(frames, queued, strict=True):
            self._emit(E.USER_MESSAGE, frame, text=text, queued=True)
        return True

    # Budget ----------------------------------------------------------------------------------

    def _tree_cost(self) -> float:
        """What the rest of this session's task tree (its sub-agents, and for a sub-agent its
        ancestors and their other sub-agents) has cost: the budget covers the whole tree."""
        return self.subagents.external_cost_usd() if self.subagents is not None else 0.0

    def _over_budget(self) -> bool:
        budget = self.settings.budget_usd
        return budget is not None and self.session_cost + self._tree_cost() > budget

    def _budget_watch(self, result: TurnResult) -> Callable[[UsageUpdate], None] | None:
        """Mid-stream: once the usage so far already costs more than the budget allows, stop the
        stream instead of paying for the rest of it."""
        budget = self.settings.budget_usd
        if budget is None:
            return None

        def watch(update: UsageUpdate) -> None:
            cost = self.route.cost(update.usage)
            if cost is not None and self.session_cost + self._tree_cost() + cost > budget:
                raise _BudgetExceeded()

        return watch


@dataclass(slots=True)
class _Resumed:
    todos: list[TodoItem]
    cost: float
    cost_known: bool
    header_key: bytes | None


def _resume(frames: Sequence[Frame]) -> _Resumed:
    """What a session takes over from its log, in one pass: the task list as the last
    successful todo_write left it (empty when there is none), the cost of every reply so far
    (known only if every reply's is), and the key of the last request header."""
    total, known = 0.0, True
    todos: list[Any] | None = None
    header: dict[str, Any] | None = None
    for frame in frames:
        if frame.damaged:
            continue
        kind = frame.type
        if kind == ev.ASSISTANT_MESSAGE:
            cost = frame.data.get("cost_usd")
            if cost is None:
                known = False
            else:
                total += float(cost)
        elif kind == ev.REQUEST_HEADER:
            header = frame.data
        elif kind == ev.TOOL_RESULT:
            written = _written_todos(frame.data)
            if written is not None:
                todos = written
    return _Resumed(
        _todo_items(todos) if todos is not None else [],
        total,
        known,
        header_key(header) if header is not None else None,
    )


def _written_todos(data: dict[str, Any]) -> list[Any] | None:
    """The list a successful todo_write result carries, else None."""
    parts = data.get("message", {}).get("content", [])
    part = parts[0] if parts and isinstance(parts[0], dict) else {}
    todos = data.get("meta", {}).get("todos")
    if part.get("name") != "todo_write" or part.get("is_error") or not isinstance(todos, list):
        return None
    return todos


def _todo_items(todos: list[Any]) -> list[TodoItem]:
    from xum.tools.base import TodoItem  # only sessions that used todo_write get here

    return [
        TodoItem(content=t["content"], status=t["status"])
        for t in todos
        if isinstance(t, dict) and t.get("status") in ("pending", "in_progress", "completed")
    ]


def _parsed_or_raw(arguments: str) -> Any:
    try:
        return orjson.loads(arguments or "{}")
    except orjson.JSONDecodeError:
        return arguments
