"""The browser shows why the governor holds a workspace back (docs/governor.md): a turn held by
a spent fleet budget says so above the in-flight reply, and again after a reload. A server of
its own, whose config.json sets a budget that is spent from the start."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.e2e.browser_support import (
    TOKEN,
    ensure_ui_built,
    fake_env,
    open_workspace,
    send,
    serving,
    skip_without_chromium,
)
from xum.testing.fakellm import FakeLLM

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def test_a_turn_held_by_the_budget_says_why_even_after_a_reload(
    browser_context: Any, fake_model: FakeLLM, tmp_path_factory: pytest.TempPathFactory
) -> None:
    skip_without_chromium()
    ensure_ui_built()
    base = tmp_path_factory.mktemp("xum-governor")
    root = base / "home" / ".xum"
    root.mkdir(parents=True, mode=0o700)
    budget = {"governor": {"budget": {"usdPerProjectPerDay": 0}}}
    (root / "config.json").write_text(json.dumps(budget))
    served_before = len(fake_model.requests)
    with serving(base, fake_env(fake_model)) as server:
        ws = server.create_workspace("held")
        page = browser_context.new_page()
        page.goto(f"{server.url}/?token={TOKEN}")
        page.wait_for_selector("nav[aria-label='Projects and workspaces']")
        open_workspace(page, ws["id"])
        send(page, "hello")
        notice = page.locator("[data-role='governor-wait']")
        notice.wait_for()
        said = notice.inner_text()
        assert "Waiting (budget)" in said and "this project's budget of $0.00" in said, said

        page.reload()
        open_workspace(page, ws["id"])
        notice.wait_for()
        assert "governor.budget.usdPerProjectPerDay" in notice.inner_text()
    assert len(fake_model.requests) == served_before  # the held turn sent nothing
