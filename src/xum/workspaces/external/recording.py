"""What an external agent reports during a prompt, written into the workspace's log.

The frames are the engine's own (`xum.store.frame_types`), appended through the engine's
`Recorder`, so every committed event is derived from its frame by the one function replay uses
(`xum.engine.derive.frame_event`): live and replayed turns of an external agent are the same
events. The mapping:

* message chunks stream as `text-delta` events and are committed as an assistant message when
  the agent moves on to a tool call, or when the prompt ends; thought chunks likewise, as the
  message's reasoning (`reasoning-delta` while they stream);
* a tool call is an assistant message with a `tool_call` part (its title, else its kind, as the
  tool's name; `rawInput` as the arguments); its result comes with the update that completes or
  fails it: the text of its `content` (a diff as unified diff text, a terminal as the output xum
  kept for it) or, when there is none, `rawOutput` (else a note that the agent reported no
  output); `failed` is an error result; a call first seen in an update (Gemini CLI announces
  its calls only in permission requests) is announced by that update;
* a plan is recorded as a `todo_write` call and its result, which is how xum's own agent shows
  its task list;
* usage: tokens from the prompt's answer; a cost only when the agent reports one in USD (the
  difference of its cumulative session cost), else the turn's cost is unknown (None), never a
  price xum made up.

Updates outside a prompt (an agent replaying its history on `session/load`) are not recorded:
the log has them already.
"""

from __future__ import annotations

import asyncio
import difflib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from xum.core.messages import Message, Usage
from xum.engine import events as E
from xum.engine.events import EventSink
from xum.engine.extensions import ToolCall
from xum.engine.recorder import Recorder, closing_frames, result_frame, turn_end_frame
from xum.engine.records import TurnReason, TurnResult
from xum.engine.stream import PARTIAL_INTERVAL_S
from xum.store import frame_types as ev

UNFINISHED_OUTPUT = "the external agent ended the turn without reporting this tool call's result"
MAX_NAME = 120
TerminalText = Callable[[str], str | None]  # terminal id -> the output kept for it


@dataclass
class _Call:
    id: str
    name: str
    kind: str = "other"
    status: str = "pending"
    content: list[Any] = field(default_factory=list)
    raw_output: Any = None
    locations: list[str] = field(default_factory=list)


# The result of a call the agent reported done with neither content nor `rawOutput` (Gemini CLI's
# shell tool): the protocol carries nothing more, and an empty result would read as no output.
NO_OUTPUT = "(the agent reported no output for this call)"


class TurnRecording:
    """One prompt's updates, turned into frames as they arrive."""

    def __init__(
        self,
        recorder: Recorder,
        emit: EventSink,
        *,
        model: str,
        result: TurnResult,
        terminal_text: TerminalText,
        cost_before: float | None,
        mask: Callable[[str], str] = str,
    ) -> None:
        self.recorder = recorder
        self.emit = emit
        self.model = model
        self.result = result
        self.terminal_text = terminal_text
        self.mask = mask  # the session's secret masker, over every tool result
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[str, _Call] = {}
        self.step = 0
        self.stepping = False  # a step_start was announced for what streams now
        self.cost_before = cost_before  # the agent's cumulative USD cost when the turn began
        self.cost_now: float | None = None
        self._lock = asyncio.Lock()  # updates are applied one at a time, in arrival order
        self._partial_at = 0.0  # when the partial was last written (time.monotonic)

    # Updates ------------------------------------------------------------------------------

    async def update(self, update: Any) -> None:
        async with self._lock:
            kind = getattr(update, "session_update", "")
            if kind == "agent_message_chunk":
                self._begin_step()
                text = _block_text(update.content)
                self.text.append(text)
                self.emit(E.TextDelta(text=text))
                self._keep_partial()
            elif kind == "agent_thought_chunk":
                self._begin_step()
                text = _block_text(update.content)
                self.reasoning.append(text)
                self.emit(E.ReasoningDelta(text=text))
                self._keep_partial()
            elif kind == "tool_call":
                await self._call_started(update)
            elif kind == "tool_call_update":
                await self._call_updated(update)
            elif kind == "plan":
                await self._plan(update)
            elif kind == "usage_update":
                cost = getattr(update, "cost", None)
                if cost is not None and str(cost.currency).upper() == "USD":
                    self.cost_now = float(cost.amount)

    def _keep_partial(self) -> None:
        """The message so far, kept as the log's partial (as the engine keeps a streaming
        reply), so a client that connects mid-message gets it before the live deltas."""
        now = time.monotonic()
        if now - self._partial_at < PARTIAL_INTERVAL_S:
            return
        self._partial_at = now
        self.recorder.log.write_partial(
            {"text": "".join(self.text), "reasoning": "".join(self.reasoning), "tool_calls": []}
        )

    def _begin_step(self) -> None:
        if not self.stepping:
            self.stepping = True
            self.emit(E.StepStart(step=self.step + 1, turn_id=self.result.turn_id))

    async def _commit(self, calls: list[ToolCall], finish: str) -> None:
        """The pending text and reasoning, with `calls`, as one assistant message."""
        text, reasoning = "".join(self.text), "".join(self.reasoning)
        if not text and not reasoning and not calls:
            return
        self._begin_step()
        self.step += 1
        self.stepping = False
        self.text.clear()
        self.reasoning.clear()
        self._partial_at = 0.0
        self.recorder.log.delete_partial()
        message: Message = {"role": "assistant", "content": []}
        if reasoning:
            message["content"].append({"type": "reasoning", "text": reasoning})
        if text:
            message["content"].append({"type": "text", "text": text})
            self.result.text = text
        for call in calls:
            message["content"].append(
                {"type": "tool_call", "id": call.id, "name": call.name, "arguments": call.arguments}
            )
        data: ev.AssistantMessageData = {
            "message": message,
            "usage": Usage().to_dict(),
            "finish_reason": finish,
            "model": self.model,
            "cost_usd": None,  # the turn's cost (when the agent reports one) is on its turn_end
            "step": self.step,
        }
        self.result.steps = self.step
        await self.recorder.append([ev.spec(ev.ASSISTANT_MESSAGE, data)])

    async def _call_started(self, update: Any) -> None:
        call_id = str(update.tool_call_id)
        if call_id in self.calls:  # announced twice: treat it as an update
            await self._call_updated(update)
            return
        kind = str(getattr(update, "kind", None) or "other")
        title = str(getattr(update, "title", None) or "").strip()
        call = _Call(id=call_id, name=(title or kind)[:MAX_NAME], kind=kind)
        self.calls[call_id] = call
        raw_input = getattr(update, "raw_input", None)
        arguments = orjson.dumps(raw_input if raw_input is not None else {}).decode()
        await self._commit([ToolCall(call_id, call.name, arguments)], "tool_use")
        self.emit(E.ToolCall(call_id=call_id, name=call.name, arguments=raw_input or {}))
        self._merge(call, update)
        if call.status in ("completed", "failed"):
            await self._finish_call(call)

    async def _call_updated(self, update: Any) -> None:
        call = self.calls.get(str(update.tool_call_id))
        if call is None:
            # Never announced with `tool_call` (Gemini CLI shows a call only in its permission
            # request, then updates it): the first update announces it.
            await self._call_started(update)
            return
        if call.status in ("completed", "failed", "recorded"):
            return  # already recorded: a result is written once
        self._merge(call, update)
        if call.status in ("completed", "failed"):
            await self._finish_call(call)

    @staticmethod
    def _merge(call: _Call, update: Any) -> None:
        if getattr(update, "status", None) is not None:
            call.status = str(update.status)
        if getattr(update, "content", None) is not None:
            call.content = list(update.content)
        if getattr(update, "raw_output", None) is not None:
            call.raw_output = update.raw_output
        if getattr(update, "kind", None) is not None:
            call.kind = str(update.kind)
        for location in getattr(update, "locations", None) or []:
            call.locations.append(str(location.path))

    async def _finish_call(self, call: _Call) -> None:
        failed = call.status == "failed"
        output = self.mask(self._output(call)) or ("the tool call failed" if failed else NO_OUTPUT)
        meta: dict[str, Any] = {"kind": call.kind, "external": True}
        if call.locations:
            meta["locations"] = call.locations
        call.status = "recorded"
        frame = result_frame(
            ToolCall(call.id, call.name, ""), output, is_error=failed, meta=meta, seconds=0.0
        )
        await self.recorder.append([frame])

    def _output(self, call: _Call) -> str:
        parts: list[str] = []
        for item in call.content:
            kind = getattr(item, "type", "")
            if kind == "content":
                parts.append(_block_text(item.content))
            elif kind == "diff":
                parts.append(unified_diff(str(item.path), item.old_text, str(item.new_text)))
            elif kind == "terminal":
                kept = self.terminal_text(str(item.terminal_id))
                parts.append(kept if kept is not None else f"[terminal {item.terminal_id}]")
        text = "\n".join(p for p in parts if p)
        if text:
            return text
        raw = call.raw_output
        if raw is None:
            return ""
        if isinstance(raw, str):
            return raw
        if isinstance(raw, dict):  # a shell's {"output": ...} or {"stdout": ..., "stderr": ...}
            for key in ("output", "stdout", "formatted_output", "aggregated_output"):
                if isinstance(raw.get(key), str) and raw[key]:
                    return str(raw[key]) + (
                        "\n" + raw["stderr"] if isinstance(raw.get("stderr"), str) else ""
                    )
        return orjson.dumps(raw, option=orjson.OPT_INDENT_2).decode()

    async def _plan(self, update: Any) -> None:
        """The agent's plan, as xum's task list: a `todo_write` call and its result."""
        todos = [
            {"content": str(e.content), "status": str(e.status)}
            for e in getattr(update, "entries", None) or []
        ]
        call_id = f"plan-{self.result.turn_id}-{len(self.calls)}"
        call = ToolCall(call_id, "todo_write", orjson.dumps({"todos": todos}).decode())
        self.calls[call_id] = _Call(id=call_id, name="todo_write", kind="think", status="recorded")
        await self._commit([call], "tool_use")
        self.emit(E.ToolCall(call_id=call_id, name="todo_write", arguments={"todos": todos}))
        marks = {"completed": "[x]", "in_progress": "[~]"}
        output = "\n".join(f"{marks.get(t['status'], '[ ]')} {t['content']}" for t in todos)
        meta: dict[str, Any] = {"todos": todos, "external": True}
        await self.recorder.append(
            [result_frame(call, output or "(empty plan)", is_error=False, meta=meta, seconds=0.0)]
        )

    # The end of the turn ------------------------------------------------------------------

    def turn_cost(self) -> float | None:
        if self.cost_now is None:
            return None
        return max(0.0, self.cost_now - (self.cost_before or 0.0))

    async def finish(self, reason: TurnReason, finish: str) -> None:
        """Commit what is pending, close calls that never got a result, and end the turn."""
        async with self._lock:
            await self._commit([], finish)
            self.result.reason = reason
            self.result.cost_usd = self.turn_cost()
            unanswered = self.recorder.unanswered()
            frames = closing_frames(unanswered, UNFINISHED_OUTPUT) if unanswered else []
            await self.recorder.append([*frames, turn_end_frame(self.result, reason)])

    def finish_now(self, reason: TurnReason) -> None:
        """The end of a turn cancelled from outside: nothing awaited, the log stays valid."""
        self.result.reason = reason
        self.recorder.log.delete_partial()
        unanswered = self.recorder.unanswered()
        frames = closing_frames(unanswered, UNFINISHED_OUTPUT) if unanswered else []
        self.recorder.append_now([*frames, turn_end_frame(self.result, reason)], guarded=True)


def unified_diff(path: str, old: str | None, new: str) -> str:
    """A diff as unified diff text (a new file when `old` is None)."""
    before = (old or "").splitlines(keepends=True)
    after = new.splitlines(keepends=True)
    lines = difflib.unified_diff(
        before, after, "/dev/null" if old is None else f"a/{path}", f"b/{path}"
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines).rstrip("\n")


def _block_text(block: Any) -> str:
    kind = getattr(block, "type", "")
    if kind == "text":
        return str(block.text)
    if kind == "resource_link":
        return f"[{getattr(block, 'name', '') or 'link'}]({block.uri})"
    if kind == "resource":
        resource = block.resource
        return str(getattr(resource, "text", "") or f"[resource {resource.uri}]")
    if kind in ("image", "audio"):
        return f"[{kind}]"
    return ""


def stop_reason(value: str) -> tuple[TurnReason, str]:
    """ACP's stopReason as xum's turn reason and the reply's finish reason."""
    if value == "end_turn":
        return "completed", "stop"
    if value == "cancelled":
        return "interrupted", "interrupted"
    if value == "max_tokens":
        return "completed", "length"
    if value == "max_turn_requests":
        return "max_steps", "max_turn_requests"
    if value == "refusal":
        return "error", "refusal"
    return "completed", value
