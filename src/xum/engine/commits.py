"""Committing what a turn produced, and closing a turn whatever ended it.

A reply is committed with the step's request records (`xum.engine.requests`) in one durable
batch; what streamed before an interrupt or a budget stop is kept too (its text and the usage the
provider reported, which is billed even without text). A turn always ends with a `turn_end`, and
every tool call it made gets a result first: an error result saying why it never ran (the user
interrupted, the budget ran out, a doom loop, an internal error). Ending a turn that broke off
awaits nothing, so it also works from a cancelled task.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

from xum.core.messages import Message, Usage, text_message
from xum.engine import events as E
from xum.engine.extensions import ToolCall
from xum.engine.ledger import Ledger
from xum.engine.recorder import FrameSpec, Recorder, closing_frames, turn_end_frame
from xum.engine.records import TurnReason, TurnResult, internal_error
from xum.engine.requests import StepRecords
from xum.engine.route import ModelRoute
from xum.engine.stream import StreamState
from xum.llm.types import Finish
from xum.store import frame_types as ev

INTERRUPTED_TOOL_OUTPUT = "interrupted: the user stopped the turn before this tool finished"
BUDGET_TOOL_OUTPUT = "not run: the session budget was exceeded, so the turn stopped"
INTERNAL_ERROR_TOOL_OUTPUT = "not finished: the turn stopped on an internal error in xum"


def message_text(message: Message) -> str:
    return "".join(p["text"] for p in message["content"] if p["type"] == "text")


def tool_calls(message: Message) -> list[ToolCall]:
    return [
        ToolCall(p["id"], p["name"], p["arguments"])
        for p in message["content"]
        if p["type"] == "tool_call"
    ]


class Commits:
    def __init__(self, recorder: Recorder, steps: StepRecords, ledger: Ledger) -> None:
        self.recorder = recorder
        self.steps = steps
        self.ledger = ledger

    async def reply(
        self, result: TurnResult, route: ModelRoute, step: int, finish: Finish
    ) -> list[ToolCall]:
        """Commit a finished reply; its tool calls are what the step runs next."""
        # A reply whose provider counted no tokens has an unknown cost, not a zero one.
        cost = route.cost(finish.usage) if finish.usage_reported else None
        data: ev.AssistantMessageData = {
            "message": finish.message,
            "usage": finish.usage.to_dict(),
            "finish_reason": finish.reason,
            "raw_finish_reason": finish.raw_reason,
            "model": route.model_string,
            "cost_usd": cost,
            "step": step,
        }
        await self.recorder.append([*self.steps.take(), ev.spec(ev.ASSISTANT_MESSAGE, data)])
        self.steps.recorded()
        self.recorder.log.delete_partial()
        self.ledger.account(result, finish.usage, cost, route.model_string)
        text = message_text(finish.message)
        if text:
            result.text = text
        return tool_calls(finish.message)

    def partial(
        self,
        result: TurnResult,
        route: ModelRoute,
        step: int,
        state: StreamState,
        reason: str = "interrupted",
    ) -> None:
        """Keep what streamed before an interrupt or a budget stop: its text (incomplete tool
        calls and unsigned reasoning cannot be replayed, so they are dropped) and the usage the
        provider reported so far. With nothing to keep, the step's frames go out with the
        turn_end instead."""
        self.recorder.log.delete_partial()
        text = "".join(state.text)
        usage = state.last_usage.usage if state.last_usage else Usage()
        if not text and not usage.input_tokens and not usage.output_tokens:
            return
        message: Message = (
            text_message("assistant", text) if text else {"role": "assistant", "content": []}
        )
        cost = route.cost(usage) if state.last_usage is not None else None
        reply: ev.AssistantMessageData = {
            "message": message,
            "usage": usage.to_dict(),
            "finish_reason": reason,
            "model": route.model_string,
            "cost_usd": cost,
            "step": step,
        }
        self.recorder.append_now([*self.steps.take(), ev.spec(ev.ASSISTANT_MESSAGE, reply)])
        self.steps.recorded()
        self.ledger.account(result, usage, cost, route.model_string)
        if text:
            result.text = text

    def close_calls(self, calls: Sequence[ToolCall], output: str) -> None:
        """Give every call that has no result yet an error result saying why it did not run,
        in one batch."""
        open_calls = self.recorder.unanswered(calls)
        if open_calls:
            self.recorder.append_now(closing_frames(open_calls, output))

    async def end_turn(
        self, result: TurnResult, reason: TurnReason, boundary: Sequence[FrameSpec] = ()
    ) -> None:
        """The durable end: the step in flight, `boundary` (a compaction's summary) and the
        turn_end in one batch; a crash leaves all of them or none."""
        # A step that ended without a reply (a provider error, an early interrupt) is recorded
        # here, so that the request it sent is on record too.
        step = self.steps.take()
        if step:
            self.recorder.log.delete_partial()
        await self.recorder.append([*step, *boundary, turn_end_frame(result, reason)])
        self.steps.recorded()

    def close_turn_now(self, result: TurnResult, reason: TurnReason, output: str) -> None:
        """End a turn that broke off (cancelled from outside, or an unexpected error) without
        awaiting anything: in one batch, the step in flight, an error result (`output`) for
        every call still without one, and the turn_end. Events go out after the write; a
        failing event sink cannot undo it."""
        results = closing_frames(self.recorder.unanswered(), output)
        step = self.steps.take()
        self.recorder.log.delete_partial()
        self.recorder.append_now([*step, *results, turn_end_frame(result, reason)], guarded=True)
        self.steps.recorded()

    def fail_turn(self, result: TurnResult, exc: Exception) -> None:
        """The last-resort end of a turn that raised something unexpected."""
        result.reason = "error"
        result.error = internal_error(exc)
        try:
            self.close_turn_now(result, "error", INTERNAL_ERROR_TOOL_OUTPUT)
        except Exception as write_error:
            exc.add_note(
                f"closing the turn failed too: {type(write_error).__name__}: {write_error}"
            )
            raise exc from exc.__cause__
        with contextlib.suppress(Exception):
            self.recorder.emit(E.ErrorEvent.from_dict(result.error))
