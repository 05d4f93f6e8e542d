"""The transcript model and its cards, without a screen: live and replayed events fold to the
same entries, and what the model or the repository wrote is drawn as plain text."""

from __future__ import annotations

import io
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console, RenderableType

from tests.tui.support import MODEL, project, use_fake_llm
from xum.engine import events as E
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.tui import cards
from xum.tui.runner import Runner, Workspace, _history
from xum.tui.transcript import Change, ToolEntry, Transcript


class Collect:
    def __init__(self) -> None:
        self.changes: list[Change] = []

    def transcript_changed(self, workspace: Workspace, changes: list[Change]) -> None:
        self.changes.extend(changes)

    def status_changed(self, workspace: Workspace) -> None:
        pass


def comparable(transcript: Transcript) -> list[dict[str, Any]]:
    """Entries without what only a live view has (ids, live output, timings)."""
    out = []
    for entry in transcript.entries:
        data = asdict(entry)
        for key in ("id", "live", "live_cut", "started", "streaming", "arguments_text"):
            data.pop(key, None)
        out.append({"kind": type(entry).__name__, **data})
    return out


async def test_live_and_replayed_events_fold_to_the_same_transcript(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    fake_llm.script(
        fakellm.reply(
            fakellm.Reasoning("let me see"),
            "Looking.",
            fakellm.ToolCall("bash", {"script": "echo out", "display_name": "echo"}),
            fakellm.ToolCall(
                "todo_write",
                {"todos": [{"content": "write it", "status": "in_progress"}]},
            ),
        ),
        fakellm.tool_call("file_read", {"path": "missing.txt"}),
        fakellm.text("All done."),
    )
    runner = Runner(Collect())
    ws = await runner.create(project(tmp_path), "local", name_hint="t", model=MODEL)
    await runner.send(ws, "go")
    assert ws.task is not None
    await ws.task
    await runner.shutdown()
    replayed = Transcript()
    for event in _history(ws.id):
        replayed.fold(event)
    live = comparable(ws.transcript)
    assert live == comparable(replayed)
    kinds = [e["kind"] for e in live]
    assert kinds == [
        "UserEntry",
        "AssistantEntry",
        "ToolEntry",
        "ToolEntry",
        "ToolEntry",
        "AssistantEntry",
    ]
    assert live[1]["text"] == "Looking." and live[5]["text"] == "All done."
    assert live[4]["is_error"]  # the file that is not there


def render(renderable: RenderableType) -> str:
    console = Console(width=80, file=io.StringIO(), force_terminal=True, color_system="standard")
    console.print(renderable)
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert isinstance(out, str)
    return out


def test_untrusted_text_cannot_style_or_steer_the_terminal() -> None:
    hostile = "\x1b]0;pwned\x07\x1b[2J[bold red]not markup[/]\x1b]52;c;Y2xpcA==\x07 done\n"
    entry = ToolEntry(1, "c1", "bash", arguments={"script": "printf x\x1b[31m"}, state="done")
    entry.output, entry.meta = hostile + "[exit code 0]", {"exit_code": 0}
    out = render(cards.tool_card(entry))
    assert "pwned" not in out  # the window-title sequence is gone as a whole
    assert "\x1b]" not in out and "\x1b[2J" not in out
    assert "[bold red]not markup[/]" in out


def test_edit_cards_colour_their_diff_and_todos_are_a_checklist() -> None:
    diff = "--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n-    return 'hi'\n+    return 'hello'\n"
    edit = ToolEntry(1, "c1", "file_edit_replace_string", {"path": "app.py"}, state="done")
    edit.meta = {"diff": diff}
    text = cards.tool_card(edit)
    out = render(text)
    assert "\x1b[32m+    return 'hello'" in out and "\x1b[31m-    return 'hi'" in out
    todos = ToolEntry(2, "c2", "todo_write", state="done")
    todos.meta = {
        "todos": [
            {"content": "plan", "status": "completed"},
            {"content": "build", "status": "in_progress"},
            {"content": "ship", "status": "pending"},
        ]
    }
    plain = render(cards.tool_card(todos))
    assert "1/3 done" in plain and "✓ " in plain and "▶ " in plain and "○ " in plain


def test_a_bash_card_shows_command_live_output_then_exit_and_duration() -> None:
    t = Transcript()
    t.fold(E.ToolCall(call_id="c", name="bash", arguments={"script": "make test"}))
    t.fold(E.ToolOutput(call_id="c", stream="output", text="compiling\n"))
    entry = t.tool("c")
    assert entry is not None
    running = render(cards.tool_card(entry))
    assert "$ make test" in running and "compiling" in running and "running" in running
    t.fold(
        E.ToolResult(
            seq=3,
            ts=0,
            call_id="c",
            name="bash",
            is_error=True,
            output="1 failed\n[exit code 2]",
            meta={"exit_code": 2, "duration_s": 1.5},
        )
    )
    done = render(cards.tool_card(entry))
    assert "exit 2 · 1.5 s" in done and "1 failed" in done and "[exit code 2]" not in done


def test_a_dropped_stream_removes_what_streamed_of_the_step() -> None:
    t = Transcript()
    t.fold(E.TextDelta(text="half a rep"))
    t.fold(E.ToolCallStart(index=0, call_id="c", name="bash"))
    changes = t.fold(E.DiscardPartial())
    assert [c.kind for c in changes] == ["remove", "remove", "add"]
    assert [type(e).__name__ for e in t.entries] == ["NoticeEntry"]
    t.fold(E.TextDelta(text="whole reply"))
    t.fold(
        E.AssistantMessage(
            seq=2,
            ts=0,
            text="whole reply",
            reasoning="",
            tool_calls=[],
            finish_reason="stop",
            usage=None,
            cost_usd=None,
        )
    )
    assert t.entries[-1].text == "whole reply"  # type: ignore[attr-defined]
    assert len(t.entries) == 2


def test_a_background_command_keeps_its_output_under_its_result() -> None:
    t = Transcript()
    args = {"script": "make watch", "run_in_background": True}
    t.fold(E.ToolCall(call_id="c", name="bash", arguments=args))
    t.fold(
        E.ToolResult(
            seq=1,
            ts=0,
            call_id="c",
            name="bash",
            is_error=False,
            output="Started in the background: taskId bash_1",
            meta={"taskId": "bash_1"},
        )
    )
    t.fold(E.ToolOutput(call_id="c", stream="bash:bash_1", text="watching files\n"))
    entry = t.tool("c")
    assert entry is not None
    out = render(cards.tool_card(entry))
    assert "in the background: bash_1" in out and "watching files" in out


def test_a_long_commands_card_names_its_full_output_file() -> None:
    entry = ToolEntry(1, "c", "bash", {"script": "seq 100000"}, state="done")
    entry.output = "1\n2\n[exit code 0]"
    entry.meta = {"exit_code": 0, "spill_path": "/tmp/scratch/out-1.txt"}
    assert "full output: /tmp/scratch/out-1.txt" in render(cards.tool_card(entry))
