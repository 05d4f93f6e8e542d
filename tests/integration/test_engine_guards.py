"""The turn loop when something goes wrong at an awkward moment: an interrupt while a reply is
being committed, a middleware that raises, an event consumer that raises. In every case the
turn ends with a durable turn_end, every tool call has a result, and a next turn continues.
Also: the task list survives a reopen. Real logs in a temp $XUM_ROOT, the fake LLM over HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.engine import Harness, valid_history
from xum.engine.agent import INTERRUPTED_TOOL_OUTPUT, AgentSession
from xum.engine.extensions import ToolCall
from xum.store import frame_types as ev
from xum.store.sessionlog import SessionLog
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.tools.base import TodoItem, ToolContext, ToolResult


def results(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == "tool-result"]


def touching(marker: Path) -> fakellm.Reply:
    """A bash call that leaves `marker` when it runs (the tests check whether it ran)."""
    return fakellm.tool_call(
        "bash", {"script": f"touch {marker}; echo ran-it", "display_name": "t"}
    )


async def test_an_interrupt_while_the_reply_is_committed_stops_the_tools(
    fake_llm: FakeLLM, harness: Harness, tmp_path: Path
) -> None:
    marker = tmp_path / "tool-ran"
    fake_llm.script(touching(marker), fakellm.text("Picked up again."))
    session: AgentSession | None = None

    def listen(event: dict[str, Any]) -> None:
        harness.events.append(event)
        if event["type"] == "assistant-message" and event["tool_calls"]:
            assert session is not None
            session.interrupt()  # nothing is cancellable right now: the reply is being committed

    session = harness.session(emit=listen)
    result = await session.run_turn("run the command")
    assert result.reason == "interrupted"
    assert not marker.exists()
    assert not any(e["type"] == "tool-call" for e in harness.events)
    (closed,) = results(harness.events)
    assert closed["is_error"] and closed["output"] == INTERRUPTED_TOOL_OUTPUT
    frames = SessionLog.open(harness.ws_id).frames
    assert frames[-1].type == ev.TURN_END and frames[-1].data["reason"] == "interrupted"
    valid_history(harness.ws_id)

    again = await session.run_turn("go on")
    assert again.reason == "completed" and again.text == "Picked up again."
    assert not marker.exists()


class Failing:
    """A middleware that raises before or after every call, as a broken hook runner might."""

    def __init__(self, stage: str) -> None:
        self.stage = stage

    async def before_tool(self, call: ToolCall, ctx: ToolContext) -> ToolResult | None:
        if self.stage == "before":
            raise RuntimeError("the hook runner crashed")
        return None

    async def after_tool(self, call: ToolCall, result: ToolResult, ctx: ToolContext) -> ToolResult:
        if self.stage == "after":
            raise RuntimeError("the secret masker crashed")
        return result


async def test_a_middleware_that_raises_before_a_call_blocks_it_and_the_turn_goes_on(
    fake_llm: FakeLLM, harness: Harness, tmp_path: Path
) -> None:
    marker = tmp_path / "tool-ran"
    fake_llm.script(touching(marker), fakellm.text("Carried on."))
    result = await harness.session(middleware=[Failing("before")]).run_turn("go")
    assert result.reason == "completed" and result.text == "Carried on."
    assert not marker.exists()
    (failed,) = results(harness.events)
    assert failed["is_error"]
    assert "bash was not run" in failed["output"]
    assert "the hook runner crashed" in failed["output"]
    assert failed["meta"]["stage"] == "before"
    sent = fake_llm.requests[1].json["messages"][-1]["content"][0]
    assert sent["type"] == "tool_result" and sent["is_error"]
    valid_history(harness.ws_id)


async def test_a_middleware_that_raises_after_a_call_withholds_its_output(
    fake_llm: FakeLLM, harness: Harness, tmp_path: Path
) -> None:
    marker = tmp_path / "tool-ran"
    fake_llm.script(touching(marker), fakellm.text("Carried on."))
    result = await harness.session(middleware=[Failing("after")]).run_turn("go")
    assert result.reason == "completed" and result.text == "Carried on."
    assert marker.exists()  # the call ran; only its result could not be processed
    (failed,) = results(harness.events)
    assert failed["is_error"]
    assert "bash ran, but" in failed["output"] and "the secret masker crashed" in failed["output"]
    assert "ran-it" not in failed["output"]
    valid_history(harness.ws_id)


@pytest.mark.parametrize("breaking_event", ["tool-call", "assistant-message"])
async def test_an_unexpected_exception_closes_the_turn_and_the_log_stays_usable(
    fake_llm: FakeLLM, harness: Harness, tmp_path: Path, breaking_event: str
) -> None:
    marker = tmp_path / "tool-ran"
    fake_llm.script(touching(marker), fakellm.text("Back to normal."))

    def broken_consumer(event: dict[str, Any]) -> None:
        harness.events.append(event)
        if event["type"] == breaking_event:
            raise BrokenPipeError("the reader of the event stream went away")

    result = await harness.session(emit=broken_consumer).run_turn("go")
    assert result.reason == "error"
    assert result.error is not None and result.error["code"] == "internal_error"
    assert "BrokenPipeError" in result.error["message"]
    assert "hint" in result.error
    assert not marker.exists()
    frames = SessionLog.open(harness.ws_id).frames
    end = frames[-1]
    assert end.type == ev.TURN_END and end.data["reason"] == "error"
    assert end.data["error"]["code"] == "internal_error"
    closed = [f for f in frames if f.type == ev.TOOL_RESULT]
    assert len(closed) == 1 and closed[0].data["message"]["content"][0]["is_error"]
    turn_ends = [e for e in harness.events if e["type"] == "turn-end"]
    assert turn_ends and turn_ends[-1]["reason"] == "error"
    valid_history(harness.ws_id)

    reopened = harness.session()
    again = await reopened.run_turn("try again")
    assert again.reason == "completed" and again.text == "Back to normal."


async def test_the_task_list_is_read_back_from_the_log_on_reopen(
    fake_llm: FakeLLM, harness: Harness
) -> None:
    todos = [
        {"content": "Wrote the parser", "status": "completed"},
        {"content": "Adding tests", "status": "in_progress"},
        {"content": "Update docs", "status": "pending"},
    ]
    refused = [{"content": "A", "status": "in_progress"}, {"content": "B", "status": "in_progress"}]
    fake_llm.script(
        fakellm.tool_call("todo_write", {"todos": todos}),
        fakellm.tool_call("todo_write", {"todos": refused}),  # an error: the list stays
        fakellm.text("Planned."),
    )
    first = harness.session()
    await first.run_turn("plan the work")
    assert [r["is_error"] for r in results(harness.events)] == [False, True]

    reopened = harness.session()  # as after a restart
    assert reopened.todos == [
        TodoItem("Wrote the parser", "completed"),
        TodoItem("Adding tests", "in_progress"),
        TodoItem("Update docs", "pending"),
    ]
    fake_llm.script(fakellm.tool_call("todo_read", {}), fakellm.text("Read it."))
    harness.events.clear()
    await reopened.run_turn("where are we?")
    (shown,) = results(harness.events)
    assert shown["output"] == (
        "1. [x] Wrote the parser\n2. [~] Adding tests (in progress)\n3. [ ] Update docs"
    )


async def test_a_session_without_todo_writes_starts_with_an_empty_list(
    fake_llm: FakeLLM, harness: Harness
) -> None:
    fake_llm.script(fakellm.text("hello"))
    await harness.session().run_turn("hi")
    assert harness.session().todos == []
