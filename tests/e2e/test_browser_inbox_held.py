"""A workspace the governor holds back, in the browser's inbox panel: a turn held by the fleet
budget shows as a `held` item with the governor's message, and leaves the panel when the held
turn is stopped (the wait ends). A server of its own: the budget it sets holds every project."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser_support import (
    TOKEN,
    ensure_ui_built,
    fake_env,
    serving,
    skip_without_chromium,
)
from xum.store.config import update_config
from xum.testing.fakellm import FakeLLM
from xum.testing.webui import XumServer

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


@pytest.fixture
def held_server(
    tmp_path: Path, fake_model: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> Iterator[XumServer]:
    skip_without_chromium()
    ensure_ui_built()
    with serving(tmp_path / "held", fake_env(fake_model)) as server:
        # Through the config's own writer (its lock), on the server's root: no project may
        # spend anything today, so every new turn is held.
        monkeypatch.setenv("XUM_ROOT", str(server.root))
        update_config(lambda c: c.__setitem__("governor", {"budget": {"usdPerProjectPerDay": 0}}))
        yield server


def test_a_budget_hold_shows_in_the_panel_until_the_turn_is_stopped(
    browser_context: Any, held_server: XumServer
) -> None:
    server = held_server
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{server.url}/?token={TOKEN}")
    page.wait_for_selector("nav[aria-label='Projects and workspaces']")
    ws = server.create_workspace("held-ws")
    page.get_by_role("button", name=re.compile(r"^Inbox: \d+ waiting$")).click()
    panel = page.locator("section[aria-label='Inbox']")

    server.api("POST", f"/api/workspaces/{ws['id']}/messages", json={"text": "hello"})
    item = panel.locator(f".inbox-item[data-kind='held'][data-workspace-id='{ws['id']}']")
    item.wait_for()
    assert item.locator("strong").inner_text() == "Held"
    assert "this project's budget" in item.locator(".inbox-summary").inner_text()
    assert item.get_by_role("button", name="Dismiss").is_visible()
    (listed,) = server.api("GET", "/api/inbox")["items"]
    assert listed["kind"] == "held" and listed["detail"]["reason"] == "budget"

    server.api("POST", f"/api/workspaces/{ws['id']}/interrupt")
    item.wait_for(state="detached")
    assert server.api("GET", "/api/inbox")["items"] == []
    assert not errors, f"uncaught errors in the page: {errors}"
