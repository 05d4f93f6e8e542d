"""The terminal UI's background processes (F12): the list of what the agent started (name,
status, its last line), Enter shows the output, Backspace stops it; a monitored process that
ends wakes the agent, and the transcript says so in one line. Through Textual's pilot, against
the fake LLM; ordered by barrier files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.tui.support import model_app, on_screen, screen_text, send, start_app, until
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.tui.background import BackgroundScreen


def background(script: str, name: str, monitor: dict[str, Any] | None) -> fakellm.Reply:
    arguments: dict[str, Any] = {"script": script, "display_name": name, "run_in_background": True}
    if monitor is not None:
        arguments["monitor"] = monitor
    return fakellm.tool_call("bash", arguments)


async def test_the_list_shows_opens_and_stops_and_an_end_wakes_the_agent(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = tmp_path / "gate"
    watched = f"echo tests starting; while [ ! -e {gate} ]; do sleep 0.01; done; exit 4"
    fake_llm.script(
        background(watched, "Test run", {}),
        background("echo serving on 8000; sleep 300", "Dev server", None),
        fakellm.reply("Both are running."),
        fakellm.reply("The test run failed with exit code 4."),
    )
    app = model_app(monkeypatch, fake_llm, tmp_path)
    async with app.run_test(size=(110, 34)) as pilot:
        await start_app(pilot)
        await send(pilot, "start the tests and the server")
        await until(pilot, lambda: len(fake_llm.requests) == 3, "the first turn's replies")
        ws = app.selected
        assert ws is not None
        await until(pilot, lambda: not ws.running, "the first turn to end")

        await pilot.press("f12")
        await until(pilot, lambda: isinstance(app.screen, BackgroundScreen), "the list")
        await on_screen(pilot, "Dev server")
        await on_screen(pilot, "serving on 8000")  # its last line
        text = screen_text(app)
        assert "Test run" in text and "watched" in text and "since" in text
        await pilot.press("enter")  # the newest (Dev server) is highlighted: its output
        await pilot.press("backspace")
        await on_screen(pilot, "stopped")
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, BackgroundScreen), "the list gone")

        gate.touch()  # the watched test run ends: the agent is woken
        await until(pilot, lambda: len(fake_llm.requests) == 4, "the wake-up turn's request")
        await on_screen(pilot, "has ended: exited, exit code 4")
        await on_screen(pilot, "The test run failed with exit code 4.")
        assert len(fake_llm.requests) == 4  # the stopped server woke nobody
