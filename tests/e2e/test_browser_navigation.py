"""Navigation in the browser UI against a real `xum server`: the address names the workspace on
screen (hash changes, pasted links, Back and Forward), the drawers follow the window across the
breakpoints, and a dialog whose action failed keeps the keyboard."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.browser_support import DESKTOP, PHONE, XumServer, open_workspace, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]

NAV = "nav[aria-label='Projects and workspaces']"
ASIDE = "aside[aria-label='Workspace details']"


def on_screen(page: Any, workspace_id: str) -> None:
    page.wait_for_selector(f".main[data-workspace-id='{workspace_id}']")


def test_the_address_selects_the_workspace(page: Any, xum_web: XumServer) -> None:
    a = xum_web.create_workspace("route-a")
    b = xum_web.create_workspace("route-b")
    page.reload()
    open_workspace(page, a["id"])
    assert page.evaluate("location.hash") == f"#/w/{a['id']}"

    # A script (or the user in the address bar) sets the hash: B comes on screen.
    page.evaluate("(id) => { location.hash = '#/w/' + id; }", b["id"])
    on_screen(page, b["id"])
    assert page.locator(f".ws-row[data-workspace-id='{b['id']}'][aria-current='true']").count()

    # Back returns to A, Forward to B: each selection is a history entry.
    page.go_back()
    on_screen(page, a["id"])
    page.go_forward()
    on_screen(page, b["id"])

    # Picking a workspace in the sidebar writes its route, and Back undoes the pick.
    open_workspace(page, a["id"])
    assert page.evaluate("location.hash") == f"#/w/{a['id']}"
    page.go_back()
    on_screen(page, b["id"])

    # A pasted link in the same tab (only the hash differs: the page is not reloaded).
    page.evaluate("() => { window.__samePage = true; }")
    page.goto(f"{xum_web.url}/#/w/{a['id']}")
    on_screen(page, a["id"])
    assert page.evaluate("window.__samePage === true"), "the link reloaded the page"

    # A link to a workspace this server does not have says so and keeps the one on screen.
    page.evaluate("() => { location.hash = '#/w/no-such-workspace'; }")
    page.get_by_role("alert").filter(has_text="no-such-workspace").wait_for()
    on_screen(page, a["id"])
    wait_until(page, "(id) => location.hash === '#/w/' + id", a["id"])


def test_drawers_close_when_the_window_narrows(page: Any, xum_web: XumServer) -> None:
    ws = xum_web.create_workspace("resize")
    page.reload()
    open_workspace(page, ws["id"])
    # Desktop: both sidebars are open columns beside the chat.
    page.locator(NAV).wait_for()
    page.locator(ASIDE).wait_for()

    page.set_viewport_size(PHONE)
    page.locator(NAV).wait_for(state="detached")
    page.locator(ASIDE).wait_for(state="detached")
    composer = page.locator("textarea[data-composer]")
    assert composer.is_visible()
    box = composer.bounding_box()
    assert box is not None and box["width"] > PHONE["width"] / 2, box
    # Nothing covers the chat: a click on the composer reaches it.
    composer.click()
    assert page.evaluate("document.activeElement.hasAttribute('data-composer')")

    # Opened as drawers, each has its close button.
    page.get_by_role("button", name="Costs and review").click()
    aside = page.locator(ASIDE)
    aside.get_by_role("button", name="Close panel").click()
    aside.wait_for(state="detached")
    page.get_by_role("button", name="Toggle sidebar").first.click()
    page.locator(NAV).get_by_role("button", name="Close sidebar").click()
    page.locator(NAV).wait_for(state="detached")

    # Back to desktop width: the columns return as they were.
    page.set_viewport_size(DESKTOP)
    page.locator(NAV).wait_for()
    page.locator(ASIDE).wait_for()
    assert page.locator(NAV).get_by_role("button", name="Close sidebar").count() == 0
    assert page.locator(ASIDE).get_by_role("button", name="Close panel").count() == 0


def test_a_failed_create_keeps_focus_in_the_dialog(page: Any, xum_web: XumServer) -> None:
    existing = xum_web.create_workspace("taken-name")
    page.reload()
    open_workspace(page, existing["id"])
    page.keyboard.press("Alt+n")
    dialog = page.get_by_role("dialog", name="New workspace")
    dialog.get_by_label("Runtime").select_option("worktree")
    dialog.get_by_label("Branch or name").fill("taken-name")
    dialog.get_by_role("button", name="Create").click()
    dialog.get_by_role("alert").wait_for()

    inside = page.evaluate(
        "() => !!document.activeElement && !!document.activeElement.closest('[role=dialog]')"
    )
    assert inside, "focus left the dialog: " + page.evaluate("document.activeElement.tagName")
    # The name field has the keyboard again, so the user can fix the name right away.
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "Branch or name"

    # Escape closes it, even after focus was moved to the page body by a click elsewhere.
    page.evaluate("() => document.activeElement.blur()")
    page.keyboard.press("Escape")
    dialog.wait_for(state="detached")
    assert page.locator(".overlay").count() == 0
    # The page under it takes clicks again.
    page.get_by_role("button", name="Costs and review").click()
    page.locator(ASIDE).wait_for(state="detached")
