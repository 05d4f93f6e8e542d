"""Each tool call gets its own frozen context; middleware returns what it changes.

Driven through the engine's real `run_calls` and real tools (file_read is read-only, so two of
them in one step run concurrently). The middleware here is a test's own layer, not a stand-in
for one of xum's.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path

import pytest

from tests.support.tools import make_ctx
from xum.engine.extensions import ToolCall
from xum.engine.toolrun import MAX_RESULT_CHARS, run_calls, run_one
from xum.tools.base import ToolContext, ToolResult

READ = ["file_read"]


def read_call(call_id: str, path: Path) -> ToolCall:
    return ToolCall(call_id, "file_read", json.dumps({"path": str(path)}))


class Tagging:
    """Changes the context of call "a" only, while "b" is in flight beside it, and records the
    context each call's tool ran with (what `after_tool` receives)."""

    def __init__(self) -> None:
        self.a_changed = asyncio.Event()
        self.b_started = asyncio.Event()
        self.ran_with: dict[str, ToolContext] = {}

    async def before_tool(
        self, call: ToolCall, ctx: ToolContext
    ) -> ToolResult | ToolContext | None:
        if call.id == "a":
            await self.b_started.wait()  # both calls are in flight now
            self.a_changed.set()
            return dataclasses.replace(ctx, plan_file="/changed-for-a", env={"ONLY": "a"})
        self.b_started.set()
        await self.a_changed.wait()  # a's change is made before b goes on
        return None

    async def after_tool(self, call: ToolCall, result: ToolResult, ctx: ToolContext) -> ToolResult:
        self.ran_with[call.id] = ctx
        return result


class Observer:
    """A second layer: sees the context as the layers before it left it."""

    def __init__(self) -> None:
        self.seen: dict[str, ToolContext] = {}

    async def before_tool(
        self, call: ToolCall, ctx: ToolContext
    ) -> ToolResult | ToolContext | None:
        self.seen[call.id] = ctx
        return None

    async def after_tool(self, call: ToolCall, result: ToolResult, ctx: ToolContext) -> ToolResult:
        return result


async def test_a_change_by_middleware_stays_with_its_call_while_another_runs_beside_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "f.txt").write_text("hello\n")
    base = make_ctx(tmp_path)
    made: list[ToolContext] = []

    def context_for(call: ToolCall) -> ToolContext:
        ctx = dataclasses.replace(base, call_id=call.id, env=dict(base.env))
        made.append(ctx)
        return ctx

    tagging, observer = Tagging(), Observer()
    results: dict[str, ToolResult] = {}

    async def on_result(call: ToolCall, result: ToolResult, seconds: float) -> None:
        results[call.id] = result

    calls = [read_call("a", tmp_path / "f.txt"), read_call("b", tmp_path / "f.txt")]
    await run_calls(
        calls,
        context_for,
        offered=READ,
        middleware=[tagging, observer],
        on_start=lambda call: None,
        on_result=on_result,
    )
    assert not results["a"].is_error and not results["b"].is_error
    # One fresh context per call, never one shared by both.
    assert [c.call_id for c in made] == ["a", "b"] and made[0] is not made[1]
    a, b = tagging.ran_with["a"], tagging.ran_with["b"]
    assert (a.call_id, b.call_id) == ("a", "b")
    # a's change reached a's later layers and a's tool, and nothing of b's.
    assert observer.seen["a"] is a and a.plan_file == "/changed-for-a" and a.env == {"ONLY": "a"}
    assert b.plan_file is None and b.env == base.env
    # The contexts the engine made were not written into.
    assert made[0].plan_file is None and made[0].env == base.env


async def test_a_context_cannot_be_written_into(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    with pytest.raises(dataclasses.FrozenInstanceError):
        ctx.env_source = "/tmp/env"  # type: ignore[misc]


class Replacing:
    """An after layer that returns a new result and records the one it was given."""

    def __init__(self) -> None:
        self.given: list[ToolResult] = []

    async def before_tool(
        self, call: ToolCall, ctx: ToolContext
    ) -> ToolResult | ToolContext | None:
        return None

    async def after_tool(self, call: ToolCall, result: ToolResult, ctx: ToolContext) -> ToolResult:
        self.given.append(result)
        return dataclasses.replace(result, output=result.output + " (seen)", meta={"seen": True})


class Blocking:
    def __init__(self, output: str) -> None:
        self.output = output
        self.blocked: ToolResult | None = None

    async def before_tool(
        self, call: ToolCall, ctx: ToolContext
    ) -> ToolResult | ToolContext | None:
        self.blocked = ToolResult(output=self.output, is_error=True, meta={"k": 1})
        return self.blocked

    async def after_tool(self, call: ToolCall, result: ToolResult, ctx: ToolContext) -> ToolResult:
        raise AssertionError("a blocked call has no after step")


async def test_results_are_passed_on_as_new_objects_never_changed_in_place(
    tmp_path: Path,
) -> None:
    (tmp_path / "f.txt").write_text("hello\n")
    ctx = make_ctx(tmp_path)
    first, second = Replacing(), Replacing()
    result = await run_one(read_call("a", tmp_path / "f.txt"), ctx, READ, [first, second])
    tool_result = first.given[0]
    assert " (seen)" not in tool_result.output and "seen" not in tool_result.meta
    assert second.given[0].output.endswith(" (seen)")
    assert result.output.endswith(" (seen) (seen)")

    # The engine's last-resort cut of a huge blocking result makes a new result as well.
    blocker = Blocking("x" * (MAX_RESULT_CHARS + 10))
    cut = await run_one(read_call("b", tmp_path / "f.txt"), ctx, READ, [blocker])
    assert blocker.blocked is not None and len(blocker.blocked.output) == MAX_RESULT_CHARS + 10
    assert blocker.blocked.meta == {"k": 1}
    assert cut is not blocker.blocked and cut.meta["truncated_chars"] == 10
    assert "characters omitted by xum" in cut.output
