"""Sidebar workspace rows: a click on a workspace's name selects it, wherever on the name it
lands; the row's buttons (Fork, MCP, Archive, Delete) never take the name's place when the
pointer arrives."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.browser_support import XumServer, open_workspace

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]


def test_a_click_anywhere_on_the_name_selects_the_workspace(page: Any, xum_web: XumServer) -> None:
    one = xum_web.create_workspace("row-one")
    two = xum_web.create_workspace("wt-two-with-a-rather-long-name")
    page.reload()
    open_workspace(page, one["id"])
    row = page.locator(f".ws-row[data-workspace-id='{two['id']}']")
    title = row.locator(".ws-title")
    page.mouse.move(1, 1)  # the pointer away: the row is drawn as the user sees it before
    box = title.bounding_box()
    assert box is not None
    for fraction in (0.95, 0.75, 0.55):
        x, y = box["x"] + box["width"] * fraction, box["y"] + box["height"] / 2
        page.mouse.move(x, y)
        hit = page.evaluate(
            "([x, y]) => { const el = document.elementFromPoint(x, y); "
            "return el && el.closest('.ws-title') ? 'title' : (el && el.closest('button') ? "
            "el.closest('button').getAttribute('aria-label') : String(el && el.className)); }",
            [x, y],
        )
        assert hit == "title", f"at {fraction:.0%} of the name the pointer is on {hit!r}"
    page.mouse.click(box["x"] + box["width"] * 0.95, box["y"] + box["height"] / 2)
    page.wait_for_selector(f".main[data-workspace-id='{two['id']}']")
    assert page.get_by_role("dialog").count() == 0, "a row button opened a dialog"
    # The buttons are still there, on the row's second line.
    assert row.get_by_role("button", name="Fork workspace").is_visible()
