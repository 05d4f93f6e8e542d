"""F9 picks any agent the workspace offers, the project's own included."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import OptionList

from tests.tui.support import model_app, on_screen, send, start_app, until
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

REVIEWER = "---\nname: Reviewer\ndescription: reads diffs and says what is wrong\nbase: exec\n---\nReview.\n"


async def test_f9_picks_a_project_agent_for_the_new_workspace(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = model_app(monkeypatch, fake_llm, tmp_path, fakellm.text("looked"))
    (app.project_dir / ".xum/agents").mkdir(parents=True)
    (app.project_dir / ".xum/agents/reviewer.md").write_text(REVIEWER)
    async with app.run_test(size=(110, 40)) as pilot:
        await start_app(pilot)
        await pilot.press("f9")
        await on_screen(pilot, "reads diffs and says what is wrong")
        await on_screen(pilot, "Exec")  # the built-ins are offered too
        listed = app.screen.query_one("#choices", OptionList)
        labels = [str(listed.get_option_at_index(i).prompt) for i in range(listed.option_count)]
        listed.highlighted = next(i for i, label in enumerate(labels) if "Reviewer" in label)
        await pilot.press("enter")
        await until(pilot, lambda: app.actions.draft_agent == "reviewer", "the agent chosen")
        await on_screen(pilot, "Reviewer · ")
        await send(pilot, "look at the diff")
        await until(pilot, lambda: app.selected and not app.selected.running, "the turn")
        ws = app.selected
        assert ws is not None and ws.record.agent == "reviewer"
