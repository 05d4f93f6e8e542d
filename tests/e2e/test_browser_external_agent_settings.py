"""Settings → External agents in the browser: the agents config.json defines, read-only, with
their label, command and models, the names of the variables they set but never the values, and
where they are defined. A server of its own, whose config.json defines one agent."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from tests.e2e.browser_support import TOKEN, ensure_ui_built, serving, skip_without_chromium

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

SECRET = "sk-browser-secret-never-shown"


def test_settings_lists_the_external_agents_without_their_secrets(
    browser_context: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    skip_without_chromium()
    ensure_ui_built()
    base = tmp_path_factory.mktemp("xum-agent-settings")
    root = base / "home" / ".xum"
    root.mkdir(parents=True, mode=0o700)
    agent = {
        "command": sys.executable,
        "args": ["-m", "xum.testing.fake_acp_agent"],
        "env": {"AGENT_API_KEY": SECRET},
        "label": "Fake <b>agent</b>",  # shown as text, never as markup
        "models": ["fake/model-a"],
    }
    (root / "config.json").write_text(json.dumps({"externalAgents": {"fake": agent}}))
    with serving(base, {}) as server:
        page = browser_context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(f"{server.url}/?token={TOKEN}")
        page.wait_for_selector("nav[aria-label='Projects and workspaces']")
        page.keyboard.press("Control+Comma")
        settings = page.get_by_role("dialog", name="Settings")
        section = settings.get_by_role("region", name="External agents")
        row = section.locator("[data-external-agent='fake']")
        row.wait_for()
        assert "Fake <b>agent</b>" in row.inner_text()
        assert section.locator("b", has_text="agent").count() == 0
        assert row.get_by_test_id("command").inner_text() == sys.executable
        assert row.get_by_test_id("models").inner_text() == "fake/model-a"
        assert row.get_by_test_id("env-names").inner_text() == "AGENT_API_KEY"
        assert str(root / "config.json") in section.inner_text()
        assert "externalAgents" in section.inner_text()
        assert SECRET not in page.content()
        # Read-only: nothing to edit or save here.
        assert section.locator("input, textarea, select, button").count() == 0
    assert not errors, errors
