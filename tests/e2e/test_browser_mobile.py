"""The UI at phone width (375 px): the sidebars become drawers, nothing overflows sideways, and
the main flows still work."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.browser_support import PHONE, TOKEN, XumServer, open_workspace, screenshot, send

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]


def no_sideways_overflow(page: Any) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the page is {width}px wide at {PHONE['width']}px"


def test_phone_width(chromium: Any, xum_web: XumServer) -> None:
    ws = xum_web.create_workspace("phone")
    context = chromium.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(f"{xum_web.url}/?token={TOKEN}#/w/{ws['id']}")
        page.wait_for_selector(
            f".main[data-workspace-id='{ws['id']}'] [data-transcript-ready='true']"
        )
        # Both sidebars start closed: the chat has the whole width.
        assert page.locator("nav[aria-label='Projects and workspaces']").count() == 0
        assert page.locator("aside[aria-label='Workspace details']").count() == 0
        no_sideways_overflow(page)

        send(page, "hello from a phone")
        page.get_by_text("Echo: hello from a phone").wait_for()
        no_sideways_overflow(page)
        screenshot(page, "chat-375")

        # The left drawer opens over the chat and closes when a workspace is picked.
        page.get_by_role("button", name="Toggle sidebar").first.click()
        nav = page.locator("nav[aria-label='Projects and workspaces']")
        nav.wait_for()
        screenshot(page, "sidebar-drawer-375")
        open_workspace(page, ws["id"])
        nav.wait_for(state="detached")

        # The right drawer: costs.
        page.get_by_role("button", name="Costs and review").click()
        page.get_by_test_id("session-cost").wait_for()
        screenshot(page, "costs-drawer-375")
        page.get_by_role("button", name="Close panel").first.click()

        # The model picker fits on screen.
        page.locator("[data-model]").click()
        page.get_by_role("dialog", name="Models").wait_for()
        box = page.get_by_role("dialog", name="Models").bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
        screenshot(page, "model-picker-375")
        page.keyboard.press("Escape")
        assert not errors, errors
    finally:
        context.close()
