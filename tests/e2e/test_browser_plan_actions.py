"""The plan card's Edit (the plan file, in place) and Implement (switch to Exec and ask for the
plan to be carried out); a diagram's click statements dropped; and the composer's send button
kept on the pickers' row at phone width."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser_support import (
    PHONE,
    PLAN_MD,
    TOKEN,
    XumServer,
    open_workspace,
    screenshot,
    send,
)
from xum.testing.webui import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]

EDITED = "# Plan\n\n1. Add a **cache** in front of the API.\n2. Edited by the user.\n"


def test_edit_then_implement_the_plan(page: Any, xum_web: XumServer) -> None:
    ws = xum_web.create_workspace("plan-actions")
    xum_web.api("PATCH", f"/api/workspaces/{ws['id']}", json={"agent": "plan"})
    page.reload()
    open_workspace(page, ws["id"])
    send(page, "make a [plan]")
    card = page.locator(".plan-card")
    page.get_by_text("The plan is ready for review.").wait_for()
    xum_web.wait_idle(ws["id"])

    card.get_by_role("button", name="Edit").click()
    editor = card.get_by_label("Plan text")
    editor.wait_for()
    assert editor.input_value() == PLAN_MD  # the file as the agent wrote it
    editor.fill(EDITED)
    card.get_by_role("button", name="Save plan").click()
    card.locator(".plan-body").get_by_text("Edited by the user.").wait_for()
    plan = xum_web.api("GET", f"/api/workspaces/{ws['id']}/plan")
    assert plan["content"] == EDITED and Path(plan["path"]).read_text() == EDITED
    screenshot(page, "plan-card-edited-1280")

    card.get_by_role("button", name="Implement").click()
    page.locator("[data-role='user']").filter(has_text="is approved. Carry it out now").wait_for()
    page.locator(".pill.mode-exec").wait_for()
    assert xum_web.api("GET", f"/api/workspaces/{ws['id']}")["agent"] == "exec"
    xum_web.wait_idle(ws["id"])


def test_a_diagram_click_statement_is_dropped(page: Any, xum_web: XumServer) -> None:
    ws = xum_web.create_workspace("mermaid-click")
    page.reload()
    open_workspace(page, ws["id"])
    send(page, "[xss] please")
    svg = page.locator(".mermaid-diagram svg").last
    svg.wait_for()
    # Two nodes, each drawn once, and nothing in the diagram links anywhere.
    wait_until(page, "() => document.querySelectorAll('.mermaid-diagram svg g.node').length === 2")
    assert svg.locator("a").count() == 0
    assert page.evaluate("window.__xss") is None


def test_send_stays_on_the_composer_row_at_phone_width(chromium: Any, xum_web: XumServer) -> None:
    ws = xum_web.create_workspace("phone-send")
    context = chromium.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    try:
        page = context.new_page()
        page.goto(f"{xum_web.url}/?token={TOKEN}#/w/{ws['id']}")
        page.wait_for_selector(
            f".main[data-workspace-id='{ws['id']}'] [data-transcript-ready='true']"
        )
        page.locator("textarea[data-composer]").fill("hello")
        screenshot(page, "composer-375")
        send_box = page.locator(".composer-bar .send").bounding_box()
        pickers = page.locator(".composer-bar .composer-pickers").bounding_box()
        assert send_box is not None and pickers is not None
        # Beside the pickers (which may wrap among themselves), not on a line of its own.
        middle = send_box["y"] + send_box["height"] / 2
        assert pickers["y"] <= middle <= pickers["y"] + pickers["height"], (send_box, pickers)
        assert send_box["x"] >= pickers["x"] + pickers["width"], (send_box, pickers)
        assert send_box["x"] + send_box["width"] <= PHONE["width"]
    finally:
        context.close()
