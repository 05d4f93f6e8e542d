"""The terminal UI end to end with the fake LLM: a message starts a workspace, the reply streams,
tool calls get their cards."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.support import MODEL, on_screen, project, screen_text, type_text, until, use_fake_llm
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.tui.app import XumApp
from xum.tui.transcript import AssistantEntry, ToolEntry


async def test_a_message_starts_a_workspace_and_streams_the_reply(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    repo = project(tmp_path)
    fake_llm.script(
        fakellm.tool_call("bash", {"script": "echo from-the-tool", "display_name": "say hi"}),
        fakellm.reply("The tool said **from-the-tool**."),
    )
    app = XumApp(repo)
    app.actions.draft_model = MODEL
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set, "the workspace list")
        await type_text(pilot, "Say hi")
        await pilot.press("enter")
        await until(pilot, lambda: app.selected is not None, "a new workspace")
        ws = app.selected
        assert ws is not None
        await until(pilot, lambda: not ws.running and ws.transcript.last_seq > 0, "the turn to end")
        kinds = [type(e).__name__ for e in ws.transcript.entries]
        assert kinds[0] == "UserEntry"
        tool = next(e for e in ws.transcript.entries if isinstance(e, ToolEntry))
        assert tool.state == "done" and "from-the-tool" in tool.output
        reply = [e for e in ws.transcript.entries if isinstance(e, AssistantEntry)][-1]
        assert reply.text == "The tool said **from-the-tool**." and not reply.streaming
        await on_screen(pilot, "The tool said from-the-tool.")
        text = screen_text(app)
        assert "say hi" in text and "exit 0" in text
        assert ws.record.project_path == str(repo) and ws.record.runtime == "local"


async def test_reasoning_is_collapsed_and_code_is_a_highlighted_block(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from textual.widgets import Collapsible
    from textual.widgets._markdown import MarkdownFence

    use_fake_llm(monkeypatch, fake_llm)
    fake_llm.script(
        fakellm.reply(
            fakellm.Reasoning("pondering the options"),
            "Here:\n\n```python\ndef answer():\n    return 42\n```\n",
        )
    )
    app = XumApp(project(tmp_path))
    app.actions.draft_model = MODEL
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set, "the workspace list")
        await type_text(pilot, "code please")
        await pilot.press("enter")
        await until(pilot, lambda: app.selected and not app.selected.running, "the turn")
        await on_screen(pilot, "return 42")
        (box,) = app.query(Collapsible)
        assert box.collapsed and "pondering" not in screen_text(app)
        (fence,) = app.query(MarkdownFence)
        assert fence.lexer == "python"  # Textual highlights it with Pygments
        box.collapsed = False
        await on_screen(pilot, "pondering the options")
