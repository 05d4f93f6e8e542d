"""A context update (xum's note to the model that part of the workspace's context changed, here
the instruction files) shows as a small collapsed note that opens on its text, never as a chat
bubble of the user's."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser_support import XumServer, open_workspace, screenshot, send

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]


def test_a_context_update_is_a_collapsed_note(page: Any, xum_web: XumServer) -> None:
    ws = xum_web.create_workspace("context-note")
    page.reload()
    open_workspace(page, ws["id"])
    send(page, "first message")
    page.get_by_text("Echo: first message").wait_for()
    xum_web.wait_idle(ws["id"])

    agents = Path(ws["path"]) / "AGENTS.md"
    agents.write_text("Answer in haiku from now on.\n")
    st = agents.stat()  # a later mtime than anything read so far (coarse filesystem clocks)
    os.utime(agents, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))
    send(page, "second message")
    page.get_by_text("Echo: second message").wait_for()

    note = page.locator("[data-role='context-note']")
    note.wait_for()
    assert "instruction files" in note.locator("summary").inner_text()
    body = note.locator(".context-note-body")
    assert not body.is_visible()  # collapsed until opened
    bubbles = page.locator("[data-role='user']").all_inner_texts()
    assert bubbles and not any("context-update" in b or "xum:" in b for b in bubbles), bubbles
    note.locator("summary").click()
    body.get_by_text("Answer in haiku from now on.").wait_for()
    screenshot(page, "context-note-1280")
