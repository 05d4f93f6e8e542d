"""The terminal UI shows why the governor holds a workspace back (docs/governor.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.support import model_app, on_screen, screen_text, send, start_app
from xum.store.config import update_config
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM


async def test_a_turn_held_by_the_fleet_budget_says_so(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    update_config(lambda c: c.__setitem__("governor", {"budget": {"usdPerProjectPerDay": 0}}))
    app = model_app(monkeypatch, fake_llm, tmp_path, fakellm.text("never sent"))
    async with app.run_test(size=(120, 30)) as pilot:
        await start_app(pilot)
        await send(pilot, "hello")
        await on_screen(pilot, "this project's budget of $0.00 a day is spent")
        status = screen_text(app).splitlines()[-1]
        assert "waiting: budget" in status, status
    assert [r for r in fake_llm.requests if r.wire is not None] == []
