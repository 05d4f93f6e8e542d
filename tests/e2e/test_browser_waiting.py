"""A turn that waits on a person says so: the tool card of a command waiting for approval reads
"waiting for approval" (not "running"), a question waiting for an answer "waiting for input",
and the Costs tab's turns list names what the open turn waits for. The Context figure follows a
running turn step by step instead of waiting for its end."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser_support import LIVE_FIRST, XumServer, open_workspace, send
from xum.testing.webui import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]


def newest_turn(page: Any) -> str:
    page.get_by_role("tab", name="Costs").click()
    item = page.locator(".file-list li").first
    item.wait_for()
    return str(item.inner_text())


def test_a_command_waiting_for_approval_says_so(page: Any, xum_web: XumServer) -> None:
    ws = xum_web.create_workspace("waits-approval")
    page.reload()
    open_workspace(page, ws["id"])
    page.get_by_role("button", name="Permissions: auto").click()
    menu = page.get_by_role("listbox", name="Permissions")
    menu.get_by_role("option").filter(has_text=re.compile(r"^Ask")).click()
    page.locator(".pill[data-permissions='ask']").wait_for()

    send(page, "[approve] touch waited.txt")
    page.locator(".approval-card").wait_for()
    card = page.locator(".tool-card[data-tool='bash']")
    card.locator(".badge", has_text="waiting for approval").wait_for()
    assert card.get_attribute("data-phase") == "approval"
    assert "running" not in card.locator(".tool-meta").inner_text()
    assert page.get_by_test_id("workspace-state").inner_text() == "waiting for approval"
    newest_turn(page)
    wait_until(
        page,
        "() => document.querySelector('.file-list li')?.innerText.includes('waiting for approval')",
    )

    page.locator(".approval-card").get_by_role("button", name="Approve once").click()
    page.locator(".tool-card[data-tool='bash'][data-phase='done']").wait_for()


def test_a_question_waiting_for_an_answer_says_so(page: Any, xum_web: XumServer) -> None:
    ws = xum_web.create_workspace("waits-input")
    xum_web.api("PATCH", f"/api/workspaces/{ws['id']}", json={"agent": "plan"})
    page.reload()
    open_workspace(page, ws["id"])
    page.locator(".pill.mode-plan").wait_for()
    send(page, "please [ask] me first")
    card = page.locator(".tool-card[data-tool='ask_user_question']")
    card.locator("form.question-form").wait_for()
    card.locator(".badge", has_text="waiting for input").wait_for()
    newest_turn(page)
    wait_until(
        page,
        "() => document.querySelector('.file-list li')?.innerText.includes('waiting for input')",
    )
    assert "–" not in page.locator(".file-list li").first.inner_text()


def test_the_context_figure_follows_a_running_turn(
    page: Any, xum_web: XumServer, tmp_path: Path
) -> None:
    ws = xum_web.create_workspace("context-live")
    page.reload()
    open_workspace(page, ws["id"])
    page.get_by_role("tab", name="Costs").click()
    bar = page.get_by_test_id("context-bar")
    bar.get_by_text("No messages in this context yet").wait_for()

    barrier = tmp_path / "release-context"
    send(page, f"[live] {barrier}")
    try:
        # The first step (the tool call) is committed and its command waits on the barrier:
        # the turn still runs, and the figure already counts the conversation so far.
        page.locator(".tool-card .live-output", has_text=LIVE_FIRST).wait_for()
        wait_until(
            page,
            "() => !document.querySelector('[data-testid=context-bar]').innerText.includes('No messages')",
        )
        assert page.get_by_test_id("workspace-state").get_attribute("data-state") == "streaming"
    finally:
        barrier.touch()
    xum_web.wait_idle(ws["id"])
