"""Approvals in the browser: the composer's permission picker, a waiting command as a card
(its text, model-controlled, rendered inert), approve once and always, and Settings → Safety."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser_support import XumServer, open_workspace, screenshot, send

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

PAYLOAD = "<img src=x onerror=window.__xss='approval'>"


def test_a_command_waits_for_approval_and_runs_once_approved(page: Any, xum_web: XumServer) -> None:
    ws = xum_web.create_workspace("approvals")
    page.reload()
    open_workspace(page, ws["id"])
    page.get_by_role("button", name="Permissions: auto").click()
    menu = page.get_by_role("listbox", name="Permissions")
    menu.get_by_role("option").filter(has_text=re.compile(r"^Ask")).click()
    page.locator(".pill[data-permissions='ask']").wait_for()
    listed = xum_web.api("GET", "/api/workspaces")["workspaces"]
    assert next(w for w in listed if w["id"] == ws["id"])["permissions"] == "ask"

    send(page, f"[approve] touch approved-once.txt # {PAYLOAD}")
    card = page.locator(".approval-card")
    card.wait_for()
    page.wait_for_selector(f".ws-row[data-workspace-id='{ws['id']}'][data-status='waiting']")
    assert PAYLOAD in card.locator(".approval-subject").inner_text()  # shown as text
    assert page.evaluate("window.__xss") is None
    assert page.locator(".approval-card img").count() == 0
    screenshot(page, "approval-card-1280")
    checkout = Path(ws["path"])
    assert not (checkout / "approved-once.txt").exists()
    card.get_by_role("button", name="Approve once").click()
    page.get_by_text("The tool finished: tool-output-42 seen.").wait_for()
    assert (checkout / "approved-once.txt").exists()
    assert page.locator(".approval-card").count() == 0

    send(page, "[approve] touch kept.txt")
    try:
        _always_allow_then_forget_in_settings(page, xum_web, card, checkout)
    finally:  # the server is shared: a rule left behind would approve later tests' commands
        for rule in xum_web.api("GET", "/api/settings/safety")["rules"]:
            body = {"project": rule["project"], "prefix": rule["prefix"]}
            xum_web.api("POST", "/api/settings/safety/rules/forget", json=body)


def _always_allow_then_forget_in_settings(
    page: Any, xum_web: XumServer, card: Any, checkout: Path
) -> None:
    card.get_by_role("button", name="Always allow").click()
    page.locator(".approval-card").wait_for(state="detached")
    page.get_by_text("The tool finished: tool-output-42 seen.").nth(1).wait_for()
    assert (checkout / "kept.txt").exists()

    page.keyboard.press("Control+,")
    section = page.locator("[data-testid='safety-settings']")
    section.wait_for()
    assert "sandbox" in section.locator("[data-testid='sandbox-backend']").inner_text()
    section.locator("[data-rule='touch']").wait_for()
    section.locator("[data-rule='touch']").get_by_role("button", name="Remove").click()
    section.locator("[data-rule='touch']").wait_for(state="detached")
    assert xum_web.api("GET", "/api/settings/safety")["rules"] == []


def test_a_denial_with_a_reason_reaches_the_model(
    page: Any, xum_web: XumServer, fake_model: Any
) -> None:
    ws = xum_web.create_workspace("deny")
    xum_web.api("PATCH", f"/api/workspaces/{ws['id']}", json={"permissions": "ask"})
    page.reload()
    open_workspace(page, ws["id"])
    send(page, "[approve] mkdir denied-dir")
    card = page.locator(".approval-card")
    card.get_by_role("button", name="Deny…").click()
    card.get_by_label("Reason for denying").fill("use the scratch dir instead")
    card.get_by_role("button", name="Deny", exact=True).click()
    page.locator(".approval-card").wait_for(state="detached")
    page.get_by_text("The tool finished: tool-output-42 seen.").wait_for()
    assert not (Path(ws["path"]) / "denied-dir").exists()
    bodies = [r.body.decode("utf-8", "replace") for r in fake_model.requests]
    assert any("the user denied it: use the scratch dir instead" in b for b in bodies)
