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
import hashlib
import os
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

import orjson

from xum.core.ids import sortable_id
from xum.core.paths import ensure_private_dir, logs_dir
from xum.engine import events as E
from xum.engine.doomloop import DoomLoopGuard
from xum.engine.events import Event, EventSink, null_sink
from xum.engine.middleware import ToolCall, ToolMiddleware
from xum.engine.route import ModelRoute
from xum.engine.stream import StreamState, stream_step
from xum.engine.toolrun import run_calls
from xum.llm.client import LLMClient
from xum.llm.errors import LLMError
from xum.llm.types import (
    Finish,
    LLMRequest,
    Message,
    ThinkingLevel,
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
from xum.tools.base import TodoItem, ToolContext, ToolResult

T = TypeVar("T")

TurnReason = Literal["completed", "interrupted", "error", "budget", "max_steps", "doom_loop"]
QueueMode = Literal["step", "turn"]

INTERRUPTED_TOOL_OUTPUT = "interrupted: the user stopped the turn before this tool finished"
BUDGET_TOOL_OUTPUT = "not run: the session budget was exceeded, so the turn stopped"


class _Interrupted(Exception):
    """Raised inside the loop when the user asked to stop."""


class _BudgetExceeded(Exception):
    """Raised mid-stream once the usage reported so far already exceeds the budget."""


@dataclass(frozen=True)
class WorkspaceInfo:
    id: str
    name: str
    project_path: str
    path: str  # the workspace directory (in the runtime's namespace)
    runtime: RuntimeKind


@dataclass
class SessionSettings:
    system_prompt: str
    tools: list[str]  # the tool names offered to the model
    thinking: ThinkingLevel = "medium"
    budget_usd: float | None = None
    max_steps: int = 200
    max_output_tokens: int | None = None
    mode: str = "exec"


@dataclass
class TurnResult:
    turn_id: str
    reason: TurnReason
    text: str = ""  # the last assistant text of the turn
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = 0.0  # None: some reply had no known price
    steps: int = 0
    error: dict[str, str] | None = None


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
        self.todos: list[TodoItem] = []
        self.projection = HistoryProjection()
        self.doom = DoomLoopGuard()
        self._step_queue: list[str] = []
        self._turn_queue: list[str] = []
        self._task: asyncio.Task[Any] | None = None
        self._pending_advisories: dict[str, str] = {}
        self._interrupt_requested = False
        self._running = False
        self.session_cost, self.cost_known = self._costs_so_far(log.frames)
        self._header_hashes = self._last_header(log.frames)
        self._tool_specs: list[ToolSpec] = []
        self._offered: list[str] = []
        self._set_tools(settings.tools)

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

    async def run_turn(self, text: str) -> TurnResult:
        result = TurnResult(turn_id=sortable_id(), reason="completed")
        self._running = True
        self._interrupt_requested = False
        self.doom.reset()
        self.log.begin_write(purpose=f"turn {result.turn_id}")
        try:
            frames = self.log.append_many(
                [
                    (ev.TURN_START, {"turn_id": result.turn_id}),
                    (ev.USER_MESSAGE, {"message": text_message("user", text)}),
                ]
            )
            self._emit(
                E.TURN_START, frames[0], turn_id=result.turn_id, model=self.route.model_string
            )
            self._emit(E.USER_MESSAGE, frames[1], text=text)
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
                self._end_turn(result, "interrupted")
                raise
            self._end_turn(result, result.reason)
            return result
        finally:
            self._running = False
            self._task = None
            self.log.end_write()

    # The loop --------------------------------------------------------------------------------

    async def _steps(self, result: TurnResult) -> None:
        for step in range(1, self.settings.max_steps + 1):
            result.steps = step
            self._check_interrupt()
            self.emit({"type": E.STEP_START, "step": step, "turn_id": result.turn_id})
            request = self._build_request()
            header = self._header_frame(request)
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
                self._commit_partial(result, step, state, header)
                raise
            except _BudgetExceeded:
                self._commit_partial(result, step, state, header, reason="budget")
                result.reason = "budget"
                return
            calls = self._commit_reply(result, step, finish, header)
            if self._over_budget():
                self._close_calls(calls, BUDGET_TOOL_OUTPUT)
                result.reason = "budget"
                return
            if not calls:
                if self._deliver_step_queue():
                    continue
                return
            stop = self._doom_check(calls)
            if stop is not None:
                self._close_calls(calls, stop)
                result.reason = "doom_loop"
                return
            await self._run_tools(calls)
            self._deliver_step_queue()
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
        offered = [n for n in names if n != "set_exit_code" or self.set_exit_code is not None]
        self._offered = offered
        self._tool_specs = [ToolSpec(**registry.tool_schema(n)) for n in offered]
        self._tools_hash = _sha256(
            orjson.dumps([(t.name, t.description, t.parameters) for t in self._tool_specs])
        )

    def _build_request(self) -> LLMRequest:
        messages = self.projection.update(self.log)
        request = LLMRequest(
            model=self.route.model_id,
            system=self.settings.system_prompt,
            messages=messages,
            tools=self._tool_specs,
            thinking=self.settings.thinking,
            max_output_tokens=self.settings.max_output_tokens,
            cache_key=f"xum-{self.workspace.id}",
            params=self.route.params,
        )
        if os.environ.get("XUM_DEBUG_LLM_REQUEST") == "1":
            self._debug_request(request)
        return request

    def _header_frame(self, request: LLMRequest) -> tuple[str, dict[str, Any]] | None:
        """A request_header frame when the system prompt or tool set changed since the last
        recorded one, so the exact request of any step can be reconstructed from the log."""
        system_hash = _sha256(request.system.encode())
        if self._header_hashes == (system_hash, self._tools_hash):
            return None
        return (
            ev.REQUEST_HEADER,
            {
                "system_sha256": system_hash,
                "tools_sha256": self._tools_hash,
                "system": request.system,
                "tools": [
                    {"name": t.name, "description": t.description, "parameters": t.parameters}
                    for t in request.tools
                ],
                "model": self.route.model_string,
                "thinking": request.thinking,
            },
        )

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
            "mode": self.settings.mode,
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

    def _commit_reply(
        self,
        result: TurnResult,
        step: int,
        finish: Finish,
        header: tuple[str, dict[str, Any]] | None,
    ) -> list[ToolCall]:
        cost = self.route.cost(finish.usage)
        data = {
            "message": finish.message,
            "usage": finish.usage.to_dict(),
            "finish_reason": finish.reason,
            "raw_finish_reason": finish.raw_reason,
            "model": self.route.model_string,
            "cost_usd": cost,
        }
        batch: list[tuple[str, dict[str, Any]]] = [
            (ev.STEP_START, {"turn_id": result.turn_id, "step": step})
        ]
        if header is not None:
            batch.append(header)
        batch.append((ev.ASSISTANT_MESSAGE, data))
        frames = self.log.append_many(batch)
        self.log.delete_partial()
        if header is not None:
            self._header_hashes = (header[1]["system_sha256"], header[1]["tools_sha256"])
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
        header: tuple[str, dict[str, Any]] | None,
        reason: str = "interrupted",
    ) -> None:
        """Keep what streamed before an interrupt or a budget stop: its text (incomplete tool
        calls and unsigned reasoning cannot be replayed, so they are dropped) and the usage the
        provider reported so far, which is billed even when no text arrived."""
        self.log.delete_partial()
        text = "".join(state.text)
        usage = state.last_usage.usage if state.last_usage else Usage()
        if not text and not usage.input_tokens and not usage.output_tokens:
            return
        message: Message = (
            text_message("assistant", text) if text else {"role": "assistant", "content": []}
        )
        batch: list[tuple[str, dict[str, Any]]] = [
            (ev.STEP_START, {"turn_id": result.turn_id, "step": step})
        ]
        if header is not None:
            batch.append(header)
            self._header_hashes = (header[1]["system_sha256"], header[1]["tools_sha256"])
        cost = self.route.cost(usage)
        batch.append(
            (
                ev.ASSISTANT_MESSAGE,
                {
                    "message": message,
                    "usage": usage.to_dict(),
                    "finish_reason": reason,
                    "model": self.route.model_string,
                    "cost_usd": cost,
                },
            )
        )
        frames = self.log.append_many(batch)
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
        self.emit(
            {
                "type": E.USAGE,
                "turn": result.usage.to_dict(),
                "turn_cost_usd": result.cost_usd,
                "session_cost_usd": self.session_cost if self.cost_known else None,
            }
        )

    def _record_result(self, call: ToolCall, result: ToolResult, seconds: float) -> None:
        message = ev.tool_result_message(
            call.id, call.name, result.output, is_error=result.is_error
        )
        frame = self.log.append(ev.TOOL_RESULT, {"message": message, "meta": result.meta})
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

    def _close_calls(self, calls: Sequence[ToolCall], output: str) -> None:
        """Give every call that has no result yet an error result saying why it did not run."""
        done = self._answered_call_ids()
        for call in calls:
            if call.id not in done:
                self._record_result(call, ToolResult(output=output, is_error=True), 0.0)

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

    def _end_turn(self, result: TurnResult, reason: TurnReason) -> None:
        data: dict[str, Any] = {"turn_id": result.turn_id, "reason": reason}
        if result.error:
            data["error"] = result.error
        frame = self.log.append(ev.TURN_END, data)
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

    def tool_context(self) -> ToolContext:
        env = dict(self.base_env)
        env.update(
            {
                "XUM_PROJECT_PATH": self.workspace.project_path,
                "XUM_RUNTIME": self.workspace.runtime,
                "XUM_WORKSPACE_NAME": self.workspace.name,
                "XUM_WORKSPACE_ID": self.workspace.id,
                "XUM_MODEL_STRING": self.route.model_string,
                "XUM_THINKING_LEVEL": self.settings.thinking,
                "XUM_COSTS_USD": f"{self.session_cost:.2f}",
                "XUM_SCRATCH_DIR": str(self.scratch_dir),
            }
        )
        return ToolContext(
            runtime=self.runtime,
            workspace_id=self.workspace.id,
            workspace_name=self.workspace.name,
            project_path=self.workspace.project_path,
            scratch_dir=str(self.scratch_dir),
            env=env,
            todos=self.todos,
            set_exit_code=self.set_exit_code,
        )

    async def _run_tools(self, calls: list[ToolCall]) -> None:
        ctx = self.tool_context()

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
                    ctx,
                    offered=self._offered,
                    middleware=self.middleware,
                    on_start=started,
                    on_result=self._with_advisories(),
                )
            )
        except _Interrupted:
            self._close_calls(calls, INTERRUPTED_TOOL_OUTPUT)
            raise

    def _with_advisories(self) -> Callable[[ToolCall, ToolResult, float], None]:
        advisories = self._pending_advisories

        def record(call: ToolCall, result: ToolResult, seconds: float) -> None:
            note = advisories.pop(call.id, None)
            if note is not None:
                result.output = f"{result.output}\n\n{note}"
                self.emit(
                    {"type": E.ADVISORY, "kind": "doom-loop", "call_id": call.id, "message": note}
                )
            self._record_result(call, result, seconds)

        return record

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

    def _deliver_step_queue(self) -> bool:
        if not self._step_queue:
            return False
        queued, self._step_queue = self._step_queue, []
        for text in queued:
            frame = self.log.append(ev.USER_MESSAGE, {"message": text_message("user", text)})
            self._emit(E.USER_MESSAGE, frame, text=text, queued=True)
        return True

    # Budget ----------------------------------------------------------------------------------

    def _over_budget(self) -> bool:
        budget = self.settings.budget_usd
        return budget is not None and self.session_cost > budget

    def _budget_watch(self, result: TurnResult) -> Callable[[UsageUpdate], None] | None:
        """Mid-stream: once the usage so far already costs more than the budget allows, stop the
        stream instead of paying for the rest of it."""
        budget = self.settings.budget_usd
        if budget is None:
            return None

        def watch(update: UsageUpdate) -> None:
            cost = self.route.cost(update.usage)
            if cost is not None and self.session_cost + cost > budget:
                raise _BudgetExceeded()

        return watch

    # Reading the log -------------------------------------------------------------------------

    @staticmethod
    def _costs_so_far(frames: Sequence[Frame]) -> tuple[float, bool]:
        total, known = 0.0, True
        for frame in frames:
            if frame.type == ev.ASSISTANT_MESSAGE and not frame.damaged:
                cost = frame.data.get("cost_usd")
                if cost is None:
                    known = False
                else:
                    total += float(cost)
        return total, known

    @staticmethod
    def _last_header(frames: Sequence[Frame]) -> tuple[str, str] | None:
        for frame in reversed(frames):
            if frame.type == ev.REQUEST_HEADER and not frame.damaged:
                return frame.data["system_sha256"], frame.data["tools_sha256"]
        return None


def _parsed_or_raw(arguments: str) -> Any:
    try:
        return orjson.loads(arguments or "{}")
    except orjson.JSONDecodeError:
        return arguments
