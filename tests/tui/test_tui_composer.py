"""The composer: the slash menu from the workspace's registry, `@` paths, history, new lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.support import (
    first_turn,
    model_app,
    project,
    send,
    start_app,
    type_text,
    until,
)
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.tui.app import XumApp
from xum.tui.composer import Suggestions

SKILL = """---
name: deploy
description: Ship the current branch to staging
---
Deploy $ARGUMENTS to staging.
"""


def offered(app: XumApp) -> list[str]:
    menu = app.query_one(Suggestions)
    return [s.insert.strip() for s in menu.items] if menu.is_open else []


async def test_slash_opens_the_workspaces_commands_and_skills(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = project(tmp_path)
    (repo / ".xum" / "skills" / "deploy").mkdir(parents=True)
    (repo / ".xum" / "skills" / "deploy" / "SKILL.md").write_text(SKILL)
    app = XumApp(repo)
    async with app.run_test(size=(100, 30)) as pilot:
        await start_app(pilot)
        await type_text(pilot, "/")
        await until(pilot, lambda: "/deploy" in offered(app), "the slash menu")
        assert {"/model", "/fork", "/deploy"} <= set(offered(app))
        await type_text(pilot, "dep")
        await until(pilot, lambda: offered(app) == ["/deploy"], "the filtered menu")
        await pilot.press("tab")
        assert app.composer.text == "/deploy "
        assert offered(app) == []  # the command is complete: the menu closed
        await type_text(pilot, "x")
        await pilot.press("ctrl+a", "ctrl+k")  # clear the line
        await type_text(pilot, "/zzz")
        await until(pilot, lambda: offered(app) == [], "nothing offered")


async def test_at_completes_a_file_path_of_the_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = project(tmp_path)
    (repo / "docs").mkdir()
    (repo / "docs" / "guide.md").write_text("# guide\n")
    app = XumApp(repo)
    async with app.run_test(size=(100, 30)) as pilot:
        await start_app(pilot)
        await type_text(pilot, "look at @gui")
        await until(pilot, lambda: offered(app) == ["@docs/guide.md"], "the path suggestion")
        await pilot.press("enter")  # takes the suggestion (it does not send)
        assert app.composer.text == "look at @docs/guide.md "
        await pilot.press("escape")  # nothing open, no turn: nothing happens
        assert app.composer.text == "look at @docs/guide.md "


async def test_history_and_new_lines(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = model_app(monkeypatch, fake_llm, tmp_path, fakellm.text("ok"))
    async with app.run_test(size=(100, 30)) as pilot:
        await first_turn(pilot, "one", "a turn")
        await send(pilot, "two")
        await until(pilot, lambda: len(fake_llm.requests) == 2 and not app.selected.running, "b")  # type: ignore[union-attr]
        composer = app.composer
        await type_text(pilot, "draft")
        await pilot.press("up")
        assert composer.text == "two"
        await pilot.press("up")
        assert composer.text == "one"
        await pilot.press("down")
        assert composer.text == "two"
        await pilot.press("down")
        assert composer.text == "draft"
        await pilot.press("ctrl+a", "ctrl+k")
        await type_text(pilot, "a")
        await pilot.press("alt+enter")
        await type_text(pilot, "b")
        await pilot.press("ctrl+j")
        await type_text(pilot, "c")
        assert composer.text == "a\nb\nc"
        await pilot.press("enter")
        await until(pilot, lambda: len(fake_llm.requests) == 3, "the three-line message")
        last = fake_llm.requests[2].json["messages"][-1]["content"]
        assert last[0]["text"] == "a\nb\nc"
