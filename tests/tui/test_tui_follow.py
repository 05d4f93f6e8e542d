"""The transcript follows its end while replies stream (a list, a code block and a table
included) unless the user scrolled up; a hint says when there is more below; PageUp and
PageDown scroll it from the composer; a table that streams in is drawn once."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.support import (
    first_turn,
    held_command,
    model_app,
    on_screen,
    project,
    screen_text,
    send,
    start_app,
    until,
)
from xum.engine import events as E
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.tui.app import XumApp
from xum.tui.fit import MORE_BELOW
from xum.tui.transcript import AssistantEntry
from xum.tui.views import ReplyView

LONG_REPLY = """Here is what I found in the project, in a few parts.

- the first item of the list
- the second item of the list
- the third item of the list
- the fourth item of the list

```python
def hello() -> None:
    print("hello")
    print("world")
```

| name | value |
|------|-------|
| a    | 1     |
| b    | 2     |
| c    | 3     |

END OF THE FIRST REPLY
"""


def streamed(text: str) -> fakellm.Reply:
    """A reply that arrives in many small deltas, over many frames."""
    return fakellm.text(text, chunk_size=7, delay=0.005)


async def test_the_view_follows_a_long_reply_and_the_next_turns_approval(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "pushed.marker"
    script = f"git push --force nowhere main 2>/dev/null; touch {marker}"
    fake_llm.script(
        streamed(LONG_REPLY),
        fakellm.tool_call("bash", {"script": script, "display_name": "pushing-the-branch"}),
    )
    app = model_app(monkeypatch, fake_llm, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await first_turn(pilot, "summarise", "the first turn")
        await on_screen(pilot, "END OF THE FIRST REPLY")
        assert MORE_BELOW not in screen_text(app)
        # The next turn waits for an approval: its tool card shows above the panel.
        await send(pilot, "push it")
        await until(pilot, lambda: app.query("ApprovalPanel Input:focus"), "the approval panel")
        await on_screen(pilot, "pushing-the-branch")
        await on_screen(pilot, "Approve once")
    assert not marker.exists()


async def test_scrolled_up_the_view_stays_and_says_there_is_more_below(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script, started, release = held_command(tmp_path, "held")
    fake_llm.script(
        streamed(LONG_REPLY),
        fakellm.tool_call("bash", {"script": script, "display_name": "held"}),
        streamed("SECOND REPLY, AT THE END"),
    )
    app = model_app(monkeypatch, fake_llm, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await first_turn(pilot, "summarise", "the first turn")
        await send(pilot, "run it")
        await until(pilot, started.exists, "the command to start")
        await on_screen(pilot, "held-running")
        view = app.transcript_view
        # PageUp from the composer scrolls the transcript.
        assert app.composer.has_focus
        await pilot.press("pageup")
        await on_screen(pilot, MORE_BELOW)
        await until(pilot, lambda: view.scroll_y == view.scroll_target_y, "the page's scroll")
        where = view.scroll_y
        assert where < view.max_scroll_y
        # The turn goes on below; the view stays where the user put it.
        release.touch()
        ws = app.selected
        assert ws is not None
        await until(pilot, lambda: not ws.running, "the second turn to end")
        await until(pilot, lambda: view.max_scroll_y > where + 3, "the reply to grow below")
        assert view.scroll_y == where
        assert "SECOND REPLY" not in screen_text(app)
        assert MORE_BELOW in screen_text(app)
        # PageDown (the composer still focused) goes back down; at the end it follows again.
        assert app.composer.has_focus
        for _ in range(10):
            if not view.more_below:
                break
            await pilot.press("pagedown")
            await pilot.pause()
        await on_screen(pilot, "SECOND REPLY, AT THE END")
        await until(pilot, lambda: MORE_BELOW not in screen_text(app), "the hint to go")


async def test_a_table_streaming_in_is_drawn_once(tmp_path: Path) -> None:
    app = XumApp(project(tmp_path))
    async with app.run_test(size=(100, 50)) as pilot:
        await start_app(pilot)
        draft, view = app.draft, app.transcript_view
        # The reply first shows mid-table (its view is made with the text so far) ...
        head = "Intro.\n\n| name | value |\n|------|-------|\n| row0 | 0 |\n"
        view.apply(draft.fold(E.TextDelta(text=head)))
        await on_screen(pilot, "row0")
        (reply,) = app.query(ReplyView)
        entry = draft.entries[-1]
        assert isinstance(entry, AssistantEntry)
        # ... then grows faster than the Markdown is drawn (several redraws in one go).
        for i in range(1, 6):
            draft.fold(E.TextDelta(text=f"| row{i} | {i} |\n"))
            reply.redraw(entry)
        draft.fold(E.TextDelta(text="\nThe end.\n"))
        reply.redraw(entry)
        await on_screen(pilot, "The end.")
        shown = screen_text(app)
        assert "| row" not in shown  # no row drawn as a plain paragraph
        assert all(shown.count(f" row{i} ") == 1 for i in range(6)), shown
        assert shown.count("Intro.") == 1 and shown.count(" name ") == 1, shown
        assert len(app.query("MarkdownTable")) == 1
