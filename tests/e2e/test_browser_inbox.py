"""The attention inbox in the browser, two pages on one server: an approval from a workspace
neither page shows arrives in both inboxes, is approved in place in one and leaves the other;
the finished turn then waits as a notice, `Alt+I` opens its workspace, and reading it there
clears the notice in the other page."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser_support import TOKEN, XumServer, open_workspace, screenshot

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def _inbox(page: Any) -> Any:
    button = page.get_by_role("button", name=re.compile(r"^Inbox: \d+ waiting$"))
    if button.get_attribute("aria-expanded") != "true":
        button.click()
    return page.locator("section[aria-label='Inbox']")


def test_an_item_answered_in_one_page_leaves_the_other(
    page: Any, browser_context: Any, xum_web: XumServer
) -> None:
    ws = xum_web.create_workspace("inboxed")
    xum_web.api("PATCH", f"/api/workspaces/{ws['id']}", json={"permissions": "ask"})
    # Both pages look at another workspace: nobody looks at the workspace that asks. (Opened
    # from the sidebar: a page of a server earlier tests used reopens the workspace it showed.)
    decoy = xum_web.create_workspace("inbox-decoy")
    other = browser_context.new_page()
    errors: list[str] = []
    other.on("pageerror", lambda exc: errors.append(str(exc)))
    other.goto(f"{xum_web.url}/?token={TOKEN}")
    page.reload()
    for p in (page, other):
        open_workspace(p, decoy["id"])
    panels = [_inbox(p) for p in (page, other)]

    xum_web.api(
        "POST", f"/api/workspaces/{ws['id']}/messages", json={"text": "[approve] touch inboxed.txt"}
    )
    mine = f".inbox-item[data-workspace-id='{ws['id']}']"
    for panel in panels:
        panel.locator(f"{mine}[data-kind='approval']").wait_for()
    item = panels[0].locator(f"{mine}[data-kind='approval']")
    assert "touch inboxed.txt" in item.locator(".approval-subject").inner_text()
    assert item.locator(".inbox-ws").inner_text() == ws["name"]
    count = page.locator(".inbox-count")
    assert int(count.get_attribute("data-count")) >= 1
    screenshot(page, "inbox-approval-1280")
    checkout = Path(ws["path"])
    assert not (checkout / "inboxed.txt").exists()

    item.get_by_role("button", name="Approve once").click()
    panels[1].locator(f"{mine}[data-kind='approval']").wait_for(state="detached")
    panels[0].locator(f"{mine}[data-kind='approval']").wait_for(state="detached")
    xum_web.wait_idle(ws["id"])
    assert (checkout / "inboxed.txt").exists()

    # Nobody read the turn: it waits in both, until one page opens the workspace.
    for panel in panels:
        panel.locator(f"{mine}[data-kind='turn-ended']").wait_for()
    waiting = len({i["workspaceId"] for i in xum_web.api("GET", "/api/inbox")["items"]})
    shown = other.locator(f".main[data-workspace-id='{ws['id']}']")
    for _ in range(waiting):
        other.keyboard.press("Alt+I")
        other.locator(".main[data-workspace-id]").wait_for()
        if shown.count():
            break
    shown.locator("[data-transcript-ready='true']").wait_for()
    panels[0].locator(f"{mine}[data-kind='turn-ended']").wait_for(state="detached")
    assert not [
        i for i in xum_web.api("GET", "/api/inbox")["items"] if i["workspaceId"] == ws["id"]
    ]
    assert not errors, f"uncaught errors in the second page: {errors}"
