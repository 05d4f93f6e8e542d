"""Tool calls that wait for the user's approval, decided in the terminal UI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.tui.support import (
    MODEL,
    on_screen,
    project,
    send,
    start_app,
    type_text,
    until,
    use_fake_llm,
)
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.tui.app import XumApp


def critical_call(marker: Path) -> Any:
    # A force push is critical in every permission mode; the remote does not exist, so nothing
    # leaves the machine. The marker says whether the script ran at all.
    script = f"git push --force nowhere main 2>/dev/null; touch {marker}"
    return fakellm.tool_call("bash", {"script": script, "display_name": "force push"})


def bash_result(request: fakellm.RecordedRequest) -> dict[str, Any]:
    block: dict[str, Any] = request.json["messages"][-1]["content"][0]
    assert block["type"] == "tool_result"
    return block


def result_text(block: dict[str, Any]) -> str:
    content = block["content"]
    return content if isinstance(content, str) else " ".join(c["text"] for c in content)


async def test_a_critical_command_waits_and_runs_once_approved(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    repo = project(tmp_path)
    marker = repo / "approved.marker"
    fake_llm.script(critical_call(marker), fakellm.text("pushed"))
    app = XumApp(repo)
    app.actions.draft_model = MODEL
    async with app.run_test(size=(110, 40)) as pilot:
        await start_app(pilot)
        await send(pilot, "force push it")
        await until(pilot, lambda: app.selected and app.selected.approval, "the approval request")
        await until(pilot, lambda: app.query("ApprovalPanel Input:focus"), "the panel's focus")
        ws = app.selected
        assert ws is not None and ws.status == "waiting"
        await on_screen(pilot, "A critical command waits for you")
        await on_screen(pilot, "a force push rewrites the remote's history")
        await on_screen(pilot, "◆")  # the sidebar's needs-input dot
        # Critical commands are never remembered: no "Always allow" button.
        assert not app.query("#approve-always")
        assert not marker.exists()  # it waits: nothing ran yet
        await pilot.press("ctrl+y")
        await until(pilot, lambda: len(fake_llm.requests) >= 2, "the result to reach the model")
        await until(pilot, lambda: not ws.running, "the turn to end")
        assert marker.exists()
        assert ws.approval is None and not app.query("ApprovalPanel")
    assert "was not run" not in result_text(bash_result(fake_llm.requests[1]))


async def test_a_denied_command_does_not_run_and_the_agent_is_told_why(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    repo = project(tmp_path)
    marker = repo / "denied.marker"
    fake_llm.script(critical_call(marker), fakellm.text("understood"))
    app = XumApp(repo)
    app.actions.draft_model = MODEL
    async with app.run_test(size=(110, 40)) as pilot:
        await start_app(pilot)
        await send(pilot, "force push it")
        await until(pilot, lambda: app.query("ApprovalPanel Input:focus"), "the approval panel")
        ws = app.selected
        assert ws is not None
        # The reason field has the focus: the words typed are the reason, Enter denies.
        await type_text(pilot, "open a pull request instead")
        await pilot.press("enter")
        await until(pilot, lambda: not ws.running, "the turn to end")
        assert ws.approval is None and not app.query("ApprovalPanel")
    assert not marker.exists()
    block = bash_result(fake_llm.requests[1])
    assert block["is_error"] is True
    assert "open a pull request instead" in result_text(block)


async def test_interrupting_the_turn_denies_the_waiting_call(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    repo = project(tmp_path)
    marker = repo / "interrupted.marker"
    fake_llm.script(critical_call(marker))
    app = XumApp(repo)
    app.actions.draft_model = MODEL
    async with app.run_test(size=(110, 40)) as pilot:
        await start_app(pilot)
        await send(pilot, "force push it")
        await until(pilot, lambda: app.query("ApprovalPanel"), "the approval panel")
        ws = app.selected
        assert ws is not None
        app.composer.focus()
        await pilot.press("escape")
        await until(pilot, lambda: not ws.running, "the turn to end")
        await until(pilot, lambda: not app.query("ApprovalPanel"), "the panel to go")
        assert ws.approval is None and ws.status != "waiting"
    assert not marker.exists()


async def test_f6_steps_the_permission_mode_and_ask_asks_with_an_always_answer(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    repo = project(tmp_path)
    first, second = repo / "first.marker", repo / "second.marker"
    fake_llm.script(
        fakellm.tool_call("bash", {"script": f"touch {first}", "display_name": "mark"}),
        fakellm.text("marked"),
        fakellm.tool_call("bash", {"script": f"touch {second}", "display_name": "mark again"}),
        fakellm.text("marked again"),
    )
    app = XumApp(repo)
    app.actions.draft_model = MODEL
    async with app.run_test(size=(110, 40)) as pilot:
        await start_app(pilot)
        # On the new-workspace row the mode is what the first message creates.
        await pilot.press("f6")
        await on_screen(pilot, "thinking medium · ask")
        await send(pilot, "mark it")
        await until(pilot, lambda: app.query("#approve-always"), "the always answer")
        ws = app.selected
        assert ws is not None and ws.record.permissions == "ask"
        assert not first.exists()
        app.query_one("#approve-always").focus()
        await pilot.press("enter")
        await until(pilot, lambda: not ws.running, "the first turn to end")
        assert first.exists()
        # The remembered prefix covers the next `touch`: it runs without asking.
        await send(pilot, "mark it again")
        await until(pilot, lambda: len(fake_llm.requests) >= 4, "the second turn's result")
        await until(pilot, lambda: not ws.running, "the second turn to end")
        assert second.exists() and not app.query("ApprovalPanel")
        # F6 goes on to read-only, then back to auto (not shown on the bar).
        await pilot.press("f6")
        await until(pilot, lambda: ws.record.permissions == "read-only", "read-only")
        await on_screen(pilot, "thinking medium · read-only")
        await pilot.press("f6")
        await until(pilot, lambda: ws.record.permissions == "auto", "auto again")
