"""Workspaces another process works in: a `xum run` in the same project shows up in the list,
its turn is followed from its log, and the writer lock keeps the UI from writing meanwhile."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.e2e.cli import XUM
from tests.tui.support import (
    held_command,
    on_screen,
    project,
    send,
    start_app,
    until,
    use_fake_llm,
)
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.tui.app import XumApp
from xum.tui.transcript import ErrorEntry, ToolEntry


async def test_a_turn_of_another_process_is_followed_and_not_written_over(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    repo = project(tmp_path)
    script, started, release = held_command(tmp_path, "run")
    fake_llm.script(
        fakellm.tool_call("bash", {"script": script, "display_name": "held"}),
        fakellm.text("the run is done"),
    )
    app = XumApp(repo)
    async with app.run_test(size=(100, 30)) as pilot:
        await start_app(pilot)
        run = subprocess.Popen(
            [XUM, "run", "-m", "sonnet", "-q", "from another process"],
            cwd=repo,
            env=dict(os.environ),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            await until(pilot, started.exists, "the run's command to start")
            await until(pilot, lambda: len(app.runner.workspaces) == 1, "the run's workspace")
            (ws,) = app.runner.workspaces.values()
            await until(pilot, lambda: ws.status == "working", "it to show working")
            await pilot.press("ctrl+down")
            await until(pilot, lambda: app.selected is ws, "selecting it")
            await until(
                pilot,
                lambda: any(isinstance(e, ToolEntry) for e in ws.transcript.entries),
                "the run's tool call, from its log",
            )
            await on_screen(pilot, "› from another process")
            await send(pilot, "me too")
            await until(
                pilot,
                lambda: any(isinstance(e, ErrorEntry) for e in ws.transcript.entries),
                "the refusal",
            )
            await on_screen(pilot, "is using this workspace's session")
            release.touch()
            _out, err = run.communicate(timeout=60)
            assert run.returncode == 0, err
            await until(pilot, lambda: ws.status != "working", "the run to end")
            await on_screen(pilot, "the run is done")
            assert len(fake_llm.requests) == 2  # nothing of ours reached the model
        finally:
            if run.poll() is None:
                run.kill()
                run.wait()
