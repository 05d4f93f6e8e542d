"""A browser reloaded while a command runs shows what the command printed before the reload
(docs/server.md: a reload picks every stream up where it left off). Ordered by a barrier file
the test creates, never by sleeping."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser_support import LIVE_FIRST, LIVE_LAST, XumServer, open_workspace, send

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]


def test_a_reload_mid_command_keeps_the_output_printed_before_it(
    page: Any, xum_web: XumServer, tmp_path: Path
) -> None:
    barrier = tmp_path / "release"
    ws = xum_web.create_workspace("reload-live")
    page.reload()
    open_workspace(page, ws["id"])
    send(page, f"[live] {barrier}")
    live = page.locator(".tool-card[data-tool='bash'] pre.live-output[data-live-stream='output']")
    live.get_by_text(LIVE_FIRST).wait_for()

    page.reload()
    open_workspace(page, ws["id"])
    card = page.locator(".tool-card[data-tool='bash']")
    # The line printed before the reload is back, while the command still runs.
    live.get_by_text(LIVE_FIRST).wait_for()
    assert not barrier.exists()
    assert card.get_attribute("data-phase") == "running"

    barrier.touch()
    page.locator(".tool-card[data-tool='bash'][data-phase='done']").wait_for()
    card.locator(".tool-head").click()
    body = card.locator(".tool-body").inner_text()
    assert LIVE_FIRST in body and LIVE_LAST in body
