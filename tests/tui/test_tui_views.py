"""The review view, the help screen, error cards with retry, the pickers, the themes and a
small terminal."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.filter import Monochrome

from tests.tui.support import (
    MODEL,
    notified,
    on_screen,
    project,
    screen_text,
    send,
    start_app,
    until,
    use_fake_llm,
)
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.tui.app import XumApp, initial_theme
from xum.tui.keys import KEYS
from xum.tui.screens import HelpScreen, ReviewScreen
from xum.tui.transcript import ErrorEntry


async def test_review_shows_the_workspaces_diff(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    fake_llm.set_default(fakellm.text("ok"))
    repo = project(tmp_path)
    app = XumApp(repo)
    app.actions.draft_model = MODEL
    async with app.run_test(size=(100, 40)) as pilot:
        await start_app(pilot)
        await pilot.press("ctrl+r")
        await until(pilot, lambda: notified(app, "select a workspace to review"), "the hint")
        await send(pilot, "hi")
        await until(pilot, lambda: app.selected and not app.selected.running, "the turn")
        (repo / "app.py").write_text("def greet():\n    return 'hello'\n")
        (repo / "new.txt").write_text("fresh\n")
        await pilot.press("ctrl+r")
        await until(pilot, lambda: isinstance(app.screen, ReviewScreen), "the review")
        await on_screen(pilot, "2 files changed")
        text = screen_text(app)
        assert "branch main" in text and "2 files changed" in text
        assert "-    return 'hi'" in text and "+    return 'hello'" in text
        assert "new.txt" in text and "+fresh" in text
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ReviewScreen), "it to close")


async def test_help_lists_every_key(tmp_path: Path) -> None:
    app = XumApp(project(tmp_path))
    async with app.run_test(size=(120, 60)) as pilot:
        await start_app(pilot)
        await pilot.press("f1")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help screen")
        await on_screen(pilot, "Esc or q closes this screen")
        text = screen_text(app)
        for key in KEYS:
            assert key.keys in text and key.action[:30] in text, key
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, HelpScreen), "it to close")
        await pilot.press("ctrl+b", "question_mark")  # outside the composer: help as well
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help again")
        await pilot.press("q")
        await until(pilot, lambda: not isinstance(app.screen, HelpScreen), "it to close")
        app.composer.focus()
        await pilot.press("w", "h", "y", "question_mark")  # in the composer it is a character
        assert app.composer.text == "why?" and not isinstance(app.screen, HelpScreen)


async def test_a_failed_turn_is_an_error_card_and_f5_sends_it_again(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    fake_llm.script(fakellm.error(401), fakellm.text("worked this time"))
    app = XumApp(project(tmp_path))
    app.actions.draft_model = MODEL
    async with app.run_test(size=(100, 30)) as pilot:
        await start_app(pilot)
        await send(pilot, "do the thing")
        await until(pilot, lambda: app.selected and not app.selected.running, "the turn")
        ws = app.selected
        assert ws is not None and ws.status == "error"
        error = next(e for e in ws.transcript.entries if isinstance(e, ErrorEntry))
        assert error.retry == "do the thing"
        await on_screen(pilot, "F5 sends the message again")
        await on_screen(pilot, "✗ do-the-thing")  # the sidebar's error dot
        await pilot.press("f5")
        await until(pilot, lambda: len(fake_llm.requests) == 2 and not ws.running, "the retry")
        await on_screen(pilot, "worked this time")
        assert ws.status == "idle"


async def test_model_and_thinking_pickers_change_the_workspace(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    fake_llm.set_default(fakellm.text("ok"))
    app = XumApp(project(tmp_path))
    async with app.run_test(size=(100, 40)) as pilot:
        await start_app(pilot)
        await until(pilot, lambda: app.actions.default_model is not None, "the default model")
        await pilot.press("f2")
        await on_screen(pilot, "Model")
        choices = app.actions.model_choices()
        await pilot.press("down", "enter")
        expected = choices[1][0]
        await until(pilot, lambda: app.actions.draft_model == expected, "the picked model")
        await on_screen(pilot, expected)
        await pilot.press("f3")
        await until(pilot, lambda: app.actions.draft_thinking not in (None, "medium"), "a level")
        level = app.actions.draft_thinking
        await on_screen(pilot, f"thinking {level}")
        await send(pilot, "go")
        await until(pilot, lambda: app.selected and not app.selected.running, "the turn")
        record = app.selected.record  # type: ignore[union-attr]
        assert record.model == expected and record.thinking == level
        assert fake_llm.requests[0].json["model"] == expected.partition(":")[2]


async def test_a_small_terminal_without_colour(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    monkeypatch.setenv("NO_COLOR", "1")
    fake_llm.set_default(fakellm.reply("A reply that fits in 80 columns."))
    app = XumApp(project(tmp_path))
    app.actions.draft_model = MODEL
    async with app.run_test(size=(80, 24)) as pilot:
        assert any(isinstance(f, Monochrome) for f in app._filters)
        await start_app(pilot)
        await send(pilot, "hello")
        await until(pilot, lambda: app.selected and not app.selected.running, "the turn")
        await on_screen(pilot, "A reply that fits in 80 columns.")
        lines = screen_text(app).splitlines()
        assert len(lines) == 24 and all(len(line) <= 80 for line in lines)
        assert "F1 help" in lines[-1] and "Exec · " in lines[-2]
        # Below 100 columns the list starts hidden (the transcript gets the width); Ctrl+O
        # shows it.
        assert "+ new workspace" not in screen_text(app)
        await pilot.press("ctrl+o")
        await on_screen(pilot, "+ new workspace")


def test_the_theme_follows_the_terminals_background() -> None:
    assert initial_theme({"COLORFGBG": "0;15"}) == "ansi-light"
    assert initial_theme({"COLORFGBG": "15;0"}) == "ansi-dark"
    assert initial_theme({}) == "ansi-dark"


async def test_f8_switches_between_dark_and_light(tmp_path: Path) -> None:
    app = XumApp(project(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await start_app(pilot)
        before = app.theme
        await pilot.press("f8")
        assert app.theme != before and app.theme in ("ansi-dark", "ansi-light")
        await pilot.press("f8")
        assert app.theme == before


async def test_page_keys_scroll_the_transcript_and_the_review(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from textual.containers import VerticalScroll

    use_fake_llm(monkeypatch, fake_llm)
    fake_llm.set_default(fakellm.text("\n\n".join(f"paragraph {i}" for i in range(80))))
    repo = project(tmp_path)
    app = XumApp(repo)
    app.actions.draft_model = MODEL
    async with app.run_test(size=(80, 24)) as pilot:
        await start_app(pilot)
        await send(pilot, "a long answer")
        await until(pilot, lambda: app.selected and not app.selected.running, "the turn")
        await on_screen(pilot, "paragraph 79")
        view = app.transcript_view
        await until(pilot, lambda: view.scroll_y > 0 and view.is_vertical_scroll_end, "the end")
        bottom = view.scroll_y
        await pilot.press("pageup")
        await until(pilot, lambda: view.scroll_y < bottom, "a page up")
        await pilot.press("pagedown")
        await until(pilot, lambda: view.scroll_y == bottom, "back down")
        (repo / "app.py").write_text("".join(f"line {i}\n" for i in range(200)))
        await pilot.press("ctrl+r")
        await on_screen(pilot, "1 files changed")
        review = app.screen.query_one(VerticalScroll)
        await pilot.press("pagedown")
        await until(pilot, lambda: review.scroll_y > 0, "the review to scroll")
        assert view.scroll_y == bottom  # the transcript behind it did not move
