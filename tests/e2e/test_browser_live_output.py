"""Live tool output in the browser: a running bash command's output appears in its card while
it runs, and the result replaces it when the command ends. Ordered by a barrier file the test
creates, never by sleeping."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser_support import (
    LIVE_FIRST,
    LIVE_LAST,
    XumServer,
    open_workspace,
    screenshot,
    send,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]


def test_a_running_command_shows_its_output_before_it_ends(
    page: Any, xum_web: XumServer, tmp_path: Path
) -> None:
    barrier = tmp_path / "release"
    ws = xum_web.create_workspace("live-output")
    page.reload()
    open_workspace(page, ws["id"])
    send(page, f"[live] {barrier}")
    card = page.locator(".tool-card[data-tool='bash']")
    live = card.locator("pre.live-output[data-live-stream='output']")
    # The first line shows while the command is still blocked on the barrier.
    live.get_by_text(LIVE_FIRST).wait_for()
    assert card.get_attribute("data-phase") == "running"
    assert not barrier.exists()
    assert LIVE_LAST not in live.inner_text()
    assert "Output (live)" in card.locator(".tool-body").inner_text()
    screenshot(page, "tool-card-live-output-1280")

    barrier.touch()
    page.locator(".tool-card[data-tool='bash'][data-phase='done']").wait_for()
    page.get_by_text("The tool finished: tool-output-42 seen.").wait_for()
    # The result replaced the live block.
    assert live.count() == 0
    card.locator(".tool-head").click()  # a finished card is collapsed: open it
    body = card.locator(".tool-body").inner_text()
    assert LIVE_FIRST in body and LIVE_LAST in body and "(live)" not in body
