"""A tool call's recorded run time starts when the checks before it let it through: a wait in
those checks (a person's approval) is not counted, and a call they refuse ran for 0 s.

Driven through the engine's real `run_calls` and a real tool (file_read); the middleware is a
test's own layer that holds a call back, as the approval layer does while a person decides."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from tests.support.tools import make_ctx
from xum.engine.extensions import ToolCall
from xum.engine.toolrun import run_calls
from xum.tools.base import ToolContext, ToolResult, error

HOLD_S = 0.3


class HoldsBack:
    """Holds call "held" back until HOLD_S has passed (noting when it let it go); refuses
    call "refused" outright."""

    def __init__(self) -> None:
        self.released_at: float | None = None

    async def before_tool(
        self, call: ToolCall, ctx: ToolContext
    ) -> ToolResult | ToolContext | None:
        if call.id == "refused":
            return error("not allowed")
        start = time.monotonic()
        while time.monotonic() - start < HOLD_S:  # a person taking their time
            await asyncio.sleep(0.01)
        self.released_at = time.monotonic()
        return None

    async def after_tool(self, call: ToolCall, result: ToolResult, ctx: ToolContext) -> ToolResult:
        return result


async def test_the_wait_before_a_call_runs_is_not_its_run_time(tmp_path: Path) -> None:
    base = make_ctx(tmp_path)
    (tmp_path / "ws" / "f.txt").write_text("hello\n")
    layer = HoldsBack()
    recorded: dict[str, tuple[float, float]] = {}

    async def on_result(call: ToolCall, result: ToolResult, seconds: float) -> None:
        recorded[call.id] = (seconds, time.monotonic())

    calls = [
        ToolCall("held", "file_read", json.dumps({"path": "f.txt"})),
        ToolCall("refused", "file_read", json.dumps({"path": "f.txt"})),
    ]
    await run_calls(
        calls,
        lambda call: base,
        offered=["file_read"],
        middleware=[layer],
        on_start=lambda call: None,
        on_result=on_result,
    )
    assert layer.released_at is not None
    seconds, reported_at = recorded["held"]
    # The run time fits between the release and the report: none of the hold is in it.
    assert 0 <= seconds <= reported_at - layer.released_at
    assert recorded["refused"][0] == 0.0
