"""Scratch chats in the browser (docs/workspaces.md): the shortcut opens a draft that makes
nothing until its first message; sending it makes the chat in its own folder and opens it,
listed under Chats, with no fork and no review; the sidebar's Chats + opens another draft."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.e2e.browser_support import XumServer, assistant_texts, screenshot
from xum.testing.webui import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def _chats(xum_web: XumServer) -> list[dict[str, Any]]:
    listed = xum_web.api("GET", "/api/workspaces")["workspaces"]
    return [w for w in listed if w.get("scratch")]


def test_a_scratch_chat_from_the_shortcut_to_its_folder(page: Any, xum_web: XumServer) -> None:
    before = {w["id"] for w in _chats(xum_web)}
    page.keyboard.press("Alt+Shift+N")
    draft = page.locator("[data-scratch-draft]")
    draft.wait_for()
    assert draft.locator(".chat-title .t").inner_text() == "New scratch chat"
    page.keyboard.press("Escape")
    assert {w["id"] for w in _chats(xum_web)} == before  # a draft makes nothing

    box = draft.locator("textarea[data-scratch-composer]")
    box.fill("hello scratch")
    box.press("Enter")
    main = page.locator(".main[data-workspace-id]")
    main.wait_for()
    wid = main.get_attribute("data-workspace-id")
    wait_until(
        page, "() => [...document.querySelectorAll(\"[data-role='assistant'] .md\")].length > 0"
    )
    assert assistant_texts(page)[-1] == "Echo: hello scratch"
    (chat,) = [w for w in _chats(xum_web) if w["id"] not in before]
    assert chat["id"] == wid and chat["path"] == str(xum_web.root / "chats" / wid)
    assert (xum_web.root / "chats" / wid).is_dir()
    assert "scratch chat" in main.locator(".chat-title .s").inner_text()

    row = page.locator(f"[data-chats] .ws-row[data-workspace-id='{wid}']")
    row.wait_for()
    row.hover()
    assert row.get_by_role("button", name="Fork workspace").count() == 0
    tabs = page.locator("aside[aria-label='Workspace details'] [role=tab]")
    assert [t.strip() for t in tabs.all_inner_texts()] == ["Costs"]
    screenshot(page, "scratch-chat-1280")

    page.locator("[data-chats]").get_by_role("button", name=re.compile("^New scratch chat")).click()
    page.locator("[data-scratch-draft]").wait_for()
    row.click()
    page.locator(f".main[data-workspace-id='{wid}']").wait_for()
