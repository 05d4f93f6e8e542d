"""The workspace on screen stays read: a turn ending in it, or a Start Here in it, does not make
its sidebar row unread (bold, blue dot), also after switching away and back; and Start Here
leaves the new boundary in view."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.browser_support import (
    XumServer,
    open_workspace,
    send,
    wait_for_streamed_words,
)
from xum.testing.webui import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]


def row_status(page: Any, workspace_id: str) -> str:
    return str(
        page.locator(f".ws-row[data-workspace-id='{workspace_id}']").get_attribute("data-status")
    )


def settled_read(page: Any, xum_web: XumServer, workspace_id: str) -> None:
    """Wait until the server's status for the workspace says read, and the row agrees."""
    wait_until(
        page,
        """(id) => {
            const row = document.querySelector(`.ws-row[data-workspace-id='${id}']`);
            return !!row && row.dataset.status !== 'unread' && !row.classList.contains('unread');
        }""",
        workspace_id,
    )
    for _ in range(50):
        status = xum_web.api("GET", f"/api/workspaces/{workspace_id}")["status"]
        if not status["unread"]:
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"the server still has {workspace_id} unread: {status}")


def scroll_to_top(page: Any) -> None:
    """Scroll the conversation to its top, as a user reading back would."""
    wait_until(
        page,
        "() => { const l = document.querySelector('.transcript'); return l.scrollHeight > l.clientHeight + 200; }",
    )
    page.locator(".transcript").hover()
    for _ in range(20):
        page.mouse.wheel(0, -4000)
        if page.evaluate("document.querySelector('.transcript').scrollTop") == 0:
            return
        page.wait_for_timeout(50)


def boundary_in_view(page: Any) -> None:
    wait_until(
        page,
        """() => {
            const card = document.querySelector(".compaction-card[data-trigger='start_here']");
            const log = document.querySelector(".transcript");
            if (!card || !log) return false;
            const c = card.getBoundingClientRect(), l = log.getBoundingClientRect();
            return c.bottom > l.top && c.top < l.bottom;
        }""",
    )


def test_the_viewed_workspace_stays_read(page: Any, xum_web: XumServer) -> None:
    a = xum_web.create_workspace("read-a")
    b = xum_web.create_workspace("read-b")
    page.reload()
    open_workspace(page, a["id"])
    for i in range(6):
        send(page, f"line {i} " + "padding text " * 60)
        page.get_by_text(f"Echo: line {i}").wait_for()
        xum_web.wait_idle(a["id"])
    settled_read(page, xum_web, a["id"])

    # A turn that ends while the user reads further up still leaves the workspace read.
    send(page, "[slow] a long one")
    wait_for_streamed_words(page, 3)
    scroll_to_top(page)
    xum_web.wait_idle(a["id"])
    settled_read(page, xum_web, a["id"])

    # Switching away and back keeps it read.
    open_workspace(page, b["id"])
    open_workspace(page, a["id"])
    settled_read(page, xum_web, a["id"])

    # Start Here on an early reply, found by scrolling up: the workspace stays read and the view
    # follows the new boundary at the end of the chat.
    scroll_to_top(page)
    reply = page.locator("[data-role='assistant']").filter(has_text="Echo: line 0")
    reply.get_by_role("button", name="Start Here").click()
    page.locator(".compaction-card[data-trigger='start_here']").wait_for(state="attached")
    xum_web.wait_idle(a["id"])
    boundary_in_view(page)
    settled_read(page, xum_web, a["id"])
    open_workspace(page, b["id"])
    open_workspace(page, a["id"])
    settled_read(page, xum_web, a["id"])
