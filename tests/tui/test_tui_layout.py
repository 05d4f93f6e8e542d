"""What fits on screen: the approval panel's buttons, the bar's model from the first frame,
the workspace list on narrow terminals and a status line that is not cut."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.tui.support import (
    MODEL,
    first_turn,
    model_app,
    on_screen,
    project,
    screen_text,
    send,
    start_app,
    until,
    use_fake_llm,
)
from xum.engine.route import DOCUMENTED_DEFAULT
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.tui.app import XumApp

SIZES = [(80, 24), (160, 48)]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_approval_buttons_show_whole(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: tuple[int, int]
) -> None:
    # A long command (it wraps on a narrow terminal) in the `ask` mode: all three answers.
    files = " ".join(f"file-number-{i}.marker" for i in range(40))
    fake_llm.script(fakellm.tool_call("bash", {"script": f"touch {files}", "display_name": "t"}))
    app = model_app(monkeypatch, fake_llm, tmp_path)
    async with app.run_test(size=size) as pilot:
        await start_app(pilot)
        await pilot.press("f6")  # ask
        await send(pilot, "touch them")
        await until(pilot, lambda: app.query("#approve-always"), "the approval panel")
        await until(pilot, lambda: app.query("ApprovalPanel Input:focus"), "the panel's focus")
        for label in ("Approve once", "Always allow 'touch' here", "Deny"):
            await on_screen(pilot, label)
        panel = app.query_one("ApprovalPanel")
        screen = app.screen.region
        for button in app.query("ApprovalPanel Button"):
            # The whole button (its three rows), inside the panel and the screen.
            assert button.region.height == 3, button
            assert panel.region.contains_region(button.region), (button, panel.region)
            assert screen.contains_region(button.region), button
        hint = "Ctrl+Y approves once"
        await on_screen(pilot, hint)


async def test_the_bar_names_the_default_model_from_the_first_frame(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)  # ANTHROPIC_API_KEY set, no model chosen
    fake_llm.set_default(fakellm.text("hello there"))
    app = XumApp(project(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        first = screen_text(app)
        assert DOCUMENTED_DEFAULT in first and "no model" not in first, first
        await start_app(pilot)
        assert DOCUMENTED_DEFAULT in screen_text(app)
        await send(pilot, "hi")
        await on_screen(pilot, "hello there")
    (request,) = fake_llm.requests
    assert request.json["model"] == DOCUMENTED_DEFAULT.partition(":")[2]


async def test_a_narrow_terminal_starts_without_the_list_and_its_status_line_fits(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = model_app(monkeypatch, fake_llm, tmp_path, fakellm.text("done"))
    async with app.run_test(size=(80, 24)) as pilot:
        await start_app(pilot)
        assert "+ new workspace" not in screen_text(app)
        ws = await first_turn(pilot, "please look at the login form and fix it", "the turn")
        await on_screen(pilot, "done")
        # Nothing is cut at the right edge: the line ends with a whole piece.
        status = screen_text(app).splitlines()[-1].rstrip()
        assert re.search(r"(\$\d+\.\d{4}|F1 help)$", status), status
        assert ws.record.name in status and " · idle · context " in status, status
        # A long name is shortened rather than the cost cut.
        long_name = "a-workspace-name-long-enough-to-push-the-cost-off-an-80-column-line"
        await app.actions.rename(ws, long_name)
        await until(pilot, lambda: "a-workspace-name" in screen_text(app), "the new name")
        status = screen_text(app).splitlines()[-1].rstrip()
        assert len(status) <= 80 and re.search(r"\$\d+\.\d{4}$", status), status
        assert "a-workspace-name" in status and "…" in status, status
        # Ctrl+B shows the list to pick from; leaving it (Esc) hides it again.
        await pilot.press("ctrl+b")
        await on_screen(pilot, "+ new workspace")
        await pilot.press("escape")
        await until(pilot, lambda: "+ new workspace" not in screen_text(app), "the list hidden")
        assert app.composer.has_focus
        # Ctrl+O shows it until Ctrl+O hides it.
        await pilot.press("ctrl+o")
        await on_screen(pilot, "+ new workspace")
        await pilot.press("ctrl+o")
        await until(pilot, lambda: "+ new workspace" not in screen_text(app), "the list hidden")


async def test_a_wide_terminal_shows_the_list_and_follows_a_resize(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = model_app(monkeypatch, fake_llm, tmp_path, fakellm.text("done"))
    async with app.run_test(size=(160, 48)) as pilot:
        await start_app(pilot)
        await on_screen(pilot, "+ new workspace")
        await first_turn(pilot, "hello", "the turn")
        status = screen_text(app).splitlines()[-1]
        assert "F1 help" in status and re.search(r"\$\d+\.\d{4}", status), status
        assert MODEL in screen_text(app)
        await pilot.resize_terminal(80, 24)
        await until(pilot, lambda: "+ new workspace" not in screen_text(app), "the list hidden")
        await pilot.resize_terminal(160, 48)
        await on_screen(pilot, "+ new workspace")
