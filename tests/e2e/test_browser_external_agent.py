"""The browser creates a workspace whose agent is an external ACP agent: the new-workspace
dialog's "Agent" choice (from `GET /api/external-agents`), the agent's label in the header and
the sidebar, the composer without xum's model, thinking and agent pickers, and a prompt that the
scripted fake agent (a real subprocess, `xum.testing.fake_acp_agent`) answers. A server of its
own, whose config.json defines the agent before it starts."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from tests.e2e.browser_support import (
    agent_dialog,
    assistant_texts,
    ensure_ui_built,
    fake_env,
    send,
    serving,
    signed_in_page,
    skip_without_chromium,
    wait_for_reply,
)
from xum.testing.fake_acp_agent import SCRIPT_ENV
from xum.testing.fakellm import FakeLLM

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

REPLY = "Hello from the fake agent."


def test_a_workspace_of_an_external_agent_is_created_and_answers(
    browser_context: Any, fake_model: FakeLLM, tmp_path_factory: pytest.TempPathFactory
) -> None:
    skip_without_chromium()
    ensure_ui_built()
    base = tmp_path_factory.mktemp("xum-external")
    script = base / "script.json"
    script.write_text(json.dumps({"prompts": [[{"message": REPLY}]]}))
    root = base / "home" / ".xum"
    root.mkdir(parents=True, mode=0o700)
    agent = {
        "command": sys.executable,
        "args": ["-m", "xum.testing.fake_acp_agent"],
        "env": {SCRIPT_ENV: str(script)},
        "label": "Fake <b>agent</b>",  # shown as text, never as markup
    }
    (root / "config.json").write_text(json.dumps({"externalAgents": {"fake": agent}}))
    with serving(base, fake_env(fake_model)) as server:
        server.api("POST", "/api/projects", json={"path": str(server.repo)})
        page, errors = signed_in_page(browser_context, server)
        dialog = agent_dialog(page, "fake")
        choice = dialog.get_by_label("Agent")
        assert choice.locator("option").all_inner_texts() == [
            "xum",
            "Fake <b>agent</b> (external agent)",
        ]
        dialog.get_by_label("Title").fill("outside help")
        dialog.get_by_role("button", name="Create").click()
        dialog.wait_for(state="detached")

        main = page.locator(".main[data-workspace-id]")
        main.locator("[data-transcript-ready='true']").wait_for()
        tag = main.locator(".chat-header [data-testid='external-agent']")
        assert tag.inner_text() == "Fake <b>agent</b>"
        assert (
            page.locator("nav [data-testid='external-agent']")
            .inner_text()
            .endswith("Fake <b>agent</b>")
        )
        assert page.locator("b", has_text="agent").count() == 0
        # Only the permission mode applies: no model, thinking or agent pill.
        pickers = main.locator(".composer-pickers")
        assert pickers.locator("button[data-permissions]").count() == 1
        for kind in ("model", "thinking", "agent"):
            assert pickers.locator(f"button[data-{kind}]").count() == 0

        send(page, "say hello")
        wait_for_reply(page, REPLY)
        assert REPLY in assistant_texts(page)[-1]
        (listed,) = server.api("GET", "/api/workspaces")["workspaces"]
        assert listed["externalAgent"] == "fake" and listed["title"] == "outside help"
    assert not errors, errors
