"""A real third-party agent (opencode, installed by `make external-agents`) in a workspace made
in the browser: the new-workspace dialog's "Agent" choice, the permission mode set to Ask, the
agent's shell command waiting on the approval card and approved there, the command's output in
its tool card and the agent's reply in the transcript. The agent talks to a fake model of its
own on loopback; the server is one of the test's own, whose config.json defines the agent."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.e2e.browser_support import (
    agent_dialog,
    assistant_texts,
    ensure_ui_built,
    send,
    serving,
    signed_in_page,
    skip_without_chromium,
    wait_for_reply,
)
from tests.support.real_agents import definition_for, shell_call, skip_without_agents
from xum.testing import external_agents as agents
from xum.testing import fakellm

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

REPLY = "The marker was printed."


def test_opencode_runs_a_turn_approved_in_the_browser(
    browser_context: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    skip_without_chromium()
    skip_without_agents()
    ensure_ui_built()
    base = tmp_path_factory.mktemp("xum-real-agent")
    model = agents.AgentModel()
    with fakellm.FakeLLM(responder=model) as llm:
        definition = definition_for("opencode", llm, base / "agent")
        root = base / "home" / ".xum"
        root.mkdir(parents=True, mode=0o700)
        config = {"externalAgents": {"opencode": definition}}
        (root / "config.json").write_text(json.dumps(config))
        with serving(base, {}) as server:
            server.api("POST", "/api/projects", json={"path": str(server.repo)})
            page, errors = signed_in_page(browser_context, server)
            dialog = agent_dialog(page, "opencode")
            dialog.get_by_role("button", name="Create").click()
            dialog.wait_for(state="detached")
            main = page.locator(".main[data-workspace-id]")
            main.locator("[data-transcript-ready='true']").wait_for()
            assert main.locator(".chat-header [data-testid='external-agent']").inner_text() == (
                "opencode"
            )
            page.get_by_role("button", name="Permissions: auto").click()
            menu = page.get_by_role("listbox", name="Permissions")
            menu.get_by_role("option").filter(has_text=re.compile(r"^Ask")).click()
            page.locator(".pill[data-permissions='ask']").wait_for()

            model.script(shell_call("opencode", "echo marker-$((6 * 7))"), fakellm.reply(REPLY))
            send(page, "Print the marker.")
            card = page.locator(".approval-card")
            card.wait_for(timeout=45_000)
            assert "marker-$((6 * 7))" in card.locator(".approval-subject").inner_text()
            card.get_by_role("button", name="Approve once").click()
            wait_for_reply(page, REPLY)
            assert REPLY in assistant_texts(page)[-1]
            tool = main.locator(".tool-card").first
            tool.locator(".tool-head").click()  # expand: the command's output
            tool.locator(".tool-body", has_text="marker-42").wait_for()
            assert "marker-42" in model.turn_requests[-1].body.decode("utf-8", "replace")
        assert not llm.errors, llm.errors
    assert not errors, errors
