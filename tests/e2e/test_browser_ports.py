"""The chat header shows the workspace's port block, its first port a link to localhost, against
a real `xum server` serving the built UI."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.browser_support import XumServer, open_workspace

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]


def test_the_header_links_the_first_port(page: Any, xum_web: XumServer) -> None:
    ws = xum_web.create_workspace("ports-shown")
    ports = ws["ports"]
    assert ports is not None and ports["last"] == ports["first"] + 9
    page.reload()
    open_workspace(page, ws["id"])
    label = page.locator(".chat-header [data-testid='ports']")
    label.wait_for()
    assert label.inner_text() == f"ports {ports['first']}-{ports['last']}"
    link = label.locator("a")
    assert link.get_attribute("href") == f"http://localhost:{ports['first']}"
