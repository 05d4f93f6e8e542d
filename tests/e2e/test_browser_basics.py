"""The browser UI against a real `xum server`: signing in, creating a workspace, a streamed answer
with a tool card, the command palette and keyboard switching."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.e2e.browser_support import (
    DESKTOP,
    TOKEN,
    XumServer,
    open_workspace,
    screenshot,
    send,
    wait_until,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]


def test_sign_in_with_the_printed_link(browser_context: Any, xum_web: XumServer) -> None:
    page = browser_context.new_page()
    page.goto(xum_web.url + "/")
    page.get_by_test_id("signin").wait_for()
    assert "xum server" in page.get_by_test_id("signin").inner_text()
    screenshot(page, "signin-1280")

    page.goto(f"{xum_web.url}/?token=wrong-token")
    page.get_by_role("alert").wait_for()
    assert "not accepted" in page.get_by_role("alert").inner_text()

    page.goto(f"{xum_web.url}/?token={TOKEN}")
    page.wait_for_selector("nav[aria-label='Projects and workspaces']")
    assert "token" not in page.url  # the exchange took it out of the address bar

    # The cookie keeps the browser signed in across reloads.
    page.reload()
    page.wait_for_selector("nav[aria-label='Projects and workspaces']")


def test_sign_in_with_the_token_form(browser_context: Any, xum_web: XumServer) -> None:
    page = browser_context.new_page()
    page.goto(xum_web.url + "/")
    page.get_by_label("Server token").fill(TOKEN)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_selector("nav[aria-label='Projects and workspaces']")


def test_create_workspace_send_prompt_and_see_tool_card(page: Any, xum_web: XumServer) -> None:
    xum_web.api("POST", "/api/projects", json={"path": str(xum_web.repo)})
    page.reload()
    page.wait_for_selector("nav[aria-label='Projects and workspaces']")
    page.keyboard.press("Alt+n")  # the browser keeps Ctrl+N for itself
    dialog = page.get_by_role("dialog", name="New workspace")
    dialog.get_by_label("Runtime").select_option("worktree")
    dialog.get_by_label("Branch or name").fill("ui-first")
    before = {w["id"] for w in xum_web.api("GET", "/api/workspaces")["workspaces"]}
    dialog.get_by_role("button", name="Create").click()
    # The new workspace's view (a workspace an earlier test made may be open until then).
    page.wait_for_function(
        "ids => { const m = document.querySelector('.main[data-workspace-id]');"
        " return m && !ids.includes(m.dataset.workspaceId)"
        " && m.querySelector(\"[data-transcript-ready='true']\") !== null; }",
        arg=sorted(before),
    )
    workspace_id = page.locator(".main[data-workspace-id]").get_attribute("data-workspace-id")
    assert page.locator(f".ws-row[data-workspace-id='{workspace_id}']").count() == 1

    send(page, "please run the [tool] for me")
    page.get_by_text("please run the [tool] for me").wait_for()
    card = page.locator(".tool-card[data-tool='bash']")
    card.wait_for()
    page.locator(".tool-card[data-tool='bash'][data-phase='done']").wait_for()
    assert "exit 0" in card.locator(".tool-head").inner_text()
    assert "echo test" in card.locator(".tool-head").inner_text()
    card.locator(".tool-head").click()  # expand: the script and its output
    assert "tool-output-42" in card.locator(".tool-body").inner_text()
    page.get_by_text("The tool finished: tool-output-42 seen.").wait_for()
    page.wait_for_selector(f".ws-row[data-workspace-id='{workspace_id}'][data-status='idle']")
    screenshot(page, "chat-tool-card-1280")

    # The right sidebar: costs of the turn, and the review pane's diff (none yet).
    page.get_by_role("tab", name="Costs").click()
    page.get_by_test_id("session-cost").wait_for()
    assert re.match(r"\$\d", page.get_by_test_id("session-cost").inner_text())
    page.get_by_role("tab", name="Review").click()
    page.get_by_text("No changes.").wait_for()


def test_palette_switches_workspace_by_keyboard(page: Any, xum_web: XumServer) -> None:
    first = xum_web.create_workspace("palette-one")
    second = xum_web.create_workspace("palette-two")
    page.reload()
    open_workspace(page, first["id"])

    page.keyboard.press("Control+Shift+P")
    palette = page.get_by_role("dialog", name="Command palette")
    palette.wait_for()
    page.keyboard.type("palette-two")
    screenshot(page, "palette-1280")
    page.keyboard.press("Enter")
    page.wait_for_selector(f".main[data-workspace-id='{second['id']}']")
    assert palette.count() == 0

    # `>` lists commands with their shortcuts; the reserved Ctrl+N shows its alternative.
    page.keyboard.press("Control+Shift+P")
    page.keyboard.type(">new workspace")
    entry = page.locator("[data-entry='new']")
    assert "Alt+N" in entry.inner_text()
    page.keyboard.press("Escape")
    assert page.get_by_role("dialog", name="Command palette").count() == 0

    # Ctrl+J / Ctrl+K step through workspaces in sidebar order.
    order = page.locator(".ws-row[data-workspace-id]").evaluate_all(
        "rows => rows.map(r => r.dataset.workspaceId)"
    )
    i = order.index(second["id"])
    page.keyboard.press("Control+j")
    page.wait_for_selector(f".main[data-workspace-id='{order[(i + 1) % len(order)]}']")
    page.keyboard.press("Control+k")
    page.wait_for_selector(f".main[data-workspace-id='{second['id']}']")


def test_keybinds_toggle_sidebar_mode_and_settings(page: Any, xum_web: XumServer) -> None:
    ws = xum_web.create_workspace("keys")
    page.reload()
    open_workspace(page, ws["id"])
    nav = page.locator("nav[aria-label='Projects and workspaces']")

    # Ctrl+P is the browser's print shortcut, but a page may take it.
    page.keyboard.press("Control+p")
    nav.wait_for(state="detached")
    page.keyboard.press("Control+p")
    nav.wait_for()

    mode = page.locator(".pill.mode-exec, .pill.mode-plan")
    assert mode.inner_text().strip().startswith("Exec")
    page.keyboard.press("Control+Shift+M")
    page.locator(".pill.mode-plan").wait_for()
    assert xum_web.api("GET", f"/api/workspaces/{ws['id']}")["agent"] == "plan"
    page.keyboard.press("Control+Shift+M")
    page.locator(".pill.mode-exec").wait_for()

    before = page.locator("[data-thinking]").get_attribute("data-thinking")
    page.keyboard.press("Control+Shift+BracketRight")
    wait_until(
        page, "(b) => document.querySelector('[data-thinking]').dataset.thinking !== b", before
    )

    page.keyboard.press("Control+Comma")
    settings = page.get_by_role("dialog", name="Settings")
    settings.wait_for()
    provider = settings.locator("[data-provider='anthropic']")
    provider.wait_for()
    # The key came from the environment: the UI names its source, never the value.
    assert "configured via env:ANTHROPIC_API_KEY" in provider.inner_text()
    assert "test-key" not in settings.inner_text()
    screenshot(page, "settings-1280")
    page.keyboard.press("Escape")
    settings.wait_for(state="detached")

    page.locator("body").click(position={"x": DESKTOP["width"] // 2, "y": 200})
    page.keyboard.press("Control+i")
    assert page.evaluate("document.activeElement.hasAttribute('data-composer')")


def test_error_turn_shows_recovery(page: Any, xum_web: XumServer) -> None:
    ws = xum_web.create_workspace("errors")
    page.reload()
    open_workspace(page, ws["id"])
    send(page, "this will [fail]")
    card = page.locator(".error-card")
    card.wait_for()
    assert "refused" in card.inner_text()
    card.get_by_role("button", name="Edit and resend").click()
    assert page.locator("textarea[data-composer]").input_value() == "this will [fail]"
    screenshot(page, "chat-error-1280")


def test_archive_and_delete_with_preview(page: Any, xum_web: XumServer) -> None:
    keep = xum_web.create_workspace("archive-me")
    doomed = xum_web.create_workspace("delete-me")
    page.reload()
    open_workspace(page, keep["id"])

    row = page.locator(f".ws-row[data-workspace-id='{keep['id']}']")
    row.get_by_role("button", name="Archive workspace").click()
    row.wait_for(state="detached")
    page.get_by_role("button", name="Archived").click()
    archived = page.locator(f".ws-row[data-workspace-id='{keep['id']}']")
    archived.hover()
    archived.get_by_role("button", name="Unarchive workspace").click()
    page.wait_for_selector(
        f".project:not(:has(button[aria-expanded])) .ws-row[data-workspace-id='{keep['id']}']"
    )

    open_workspace(page, doomed["id"])
    row = page.locator(f".ws-row[data-workspace-id='{doomed['id']}']")
    row.get_by_role("button", name="Delete workspace").click()
    dialog = page.get_by_role("dialog", name="Delete delete-me?")
    removes = dialog.get_by_role("list", name="What will be removed")
    removes.wait_for()
    text = removes.inner_text()
    assert "Git worktree" in text
    assert doomed["path"] in text  # named by path
    assert "Git branch: delete-me" in text
    screenshot(page, "delete-dialog-1280")
    dialog.get_by_role("button", name="Delete", exact=True).click()
    row.wait_for(state="detached")
    assert all(w["id"] != doomed["id"] for w in xum_web.api("GET", "/api/workspaces")["workspaces"])
