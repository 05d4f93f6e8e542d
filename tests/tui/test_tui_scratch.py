"""Scratch chats in the terminal UI: Ctrl+Shift+N turns the draft row into a new chat that is
made (with its private folder) only by the first message, listed as a chat; the Ctrl+N dialog
offers the same; and a notice from the agent's `notify` call shows as a toast."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.tui.support import model_app, notified, on_screen, send, start_app, until
from xum.store import registry
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.tui.dialogs import NewWorkspaceDialog


def _chats() -> list[registry.WorkspaceRecord]:
    return [r for r in registry.list_workspaces() if r.extra.get("scratch") is True]


async def test_a_scratch_chat_is_made_by_its_first_message(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_llm.script(
        fakellm.tool_call("notify", {"title": "Chat ready", "message": "first answer in"}),
        fakellm.text("Hello from a chat."),
    )
    app = model_app(monkeypatch, fake_llm, tmp_path)
    async with app.run_test(size=(110, 40)) as pilot:
        await start_app(pilot)
        await pilot.press("ctrl+shift+n")
        await on_screen(pilot, "new scratch chat")
        assert _chats() == [] and app.selected is None  # nothing before the first message
        await send(pilot, "hello chat")
        await until(pilot, lambda: app.selected is not None, "the chat")
        await on_screen(pilot, "Hello from a chat.")
        (chat,) = _chats()
        assert app.selected is not None and app.selected.id == chat.id
        folder = Path(os.environ["XUM_ROOT"]) / "chats" / chat.id
        assert chat.path == str(folder) and folder.is_dir()
        await on_screen(pilot, f"{chat.name} chat")  # the list marks it
        await until(
            pilot,
            lambda: notified(app, f"{chat.name}: first answer in"),
            "the notification's toast",
        )

        # The dialog offers it too; the draft row then makes a second chat.
        await pilot.press("ctrl+n")
        await until(pilot, lambda: isinstance(app.screen, NewWorkspaceDialog), "the dialog")
        await pilot.press("down", "down", "down", "enter")  # the runtime list: scratch chat
        await pilot.click("#title")
        await pilot.press("enter")
        await until(pilot, lambda: app.selected is None, "the draft row")
        await send(pilot, "second chat")
        await until(pilot, lambda: len(_chats()) == 2, "the second chat")
