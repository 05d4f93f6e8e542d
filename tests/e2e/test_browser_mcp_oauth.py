"""Signing in to an OAuth-protected MCP server from the browser, against a real `xum server` and
a local OAuth-protected MCP server built with the SDK's auth (tests/mcp/oauth_server.py): the
Sign in button of Settings → MCP (and of the workspace MCP dialog, for a server whose session
found it needs a sign-in) opens a tab that goes through the authorization server and
lands on xum's callback page, and the tokens are stored (tests/integration/test_mcp_oauth.py
shows sessions using them)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser_support import (
    XumServer,
    browser_fake,
    fake_env,
    open_new_workspace,
    send,
    serving,
)
from tests.mcp import oauth_server
from xum.testing.fakellm import FakeLLM

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


@pytest.fixture(scope="module")
def oauth_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    marks = tmp_path_factory.mktemp("oauth-marks")
    env = {**os.environ, "MCP_TEST_DIR": str(marks)}
    proc = subprocess.Popen([sys.executable, oauth_server.__file__], env=env)
    try:
        deadline = time.monotonic() + 30
        while not (marks / "port").exists():
            assert proc.poll() is None, "the OAuth test server exited"
            assert time.monotonic() < deadline, "the OAuth test server did not start"
            time.sleep(0.02)
        yield f"http://127.0.0.1:{(marks / 'port').read_text()}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture(scope="module")
def oauth_xum(
    tmp_path_factory: pytest.TempPathFactory, oauth_url: str
) -> Iterator[tuple[XumServer, FakeLLM]]:
    with (
        browser_fake() as fake,
        serving(tmp_path_factory.mktemp("mcp-oauth-ui"), fake_env(fake)) as server,
    ):
        (server.root / "mcp.jsonc").write_text(json.dumps({"servers": {"web": {"url": oauth_url}}}))
        yield server, fake


def test_the_workspace_dialog_offers_sign_in_when_a_server_needs_it(
    browser_context: Any, oauth_xum: tuple[XumServer, FakeLLM], oauth_url: str
) -> None:
    server, _fake = oauth_xum
    store = Path(server.root) / "mcp-oauth.json"
    store.unlink(missing_ok=True)  # not signed in yet
    page, ws, errors = open_new_workspace(browser_context, server, "mcp-oauth-dialog")
    send(page, "hello")  # the session starts its servers: this one needs a sign-in
    page.locator("[data-role='assistant']").first.wait_for()
    row = page.locator(f'.ws-row[data-workspace-id="{ws["id"]}"]')
    row.hover()
    row.get_by_role("button", name="Workspace MCP servers").click()
    dialog = page.get_by_role("dialog", name="Workspace MCP servers")
    entry = dialog.locator("[data-mcp-server='web']")
    entry.get_by_text("needs-sign-in").wait_for()
    with page.expect_popup() as popup_info:
        entry.get_by_role("button", name="Sign in to web").click()
    popup_info.value.get_by_text("Signed in to web").wait_for()
    assert json.loads(store.read_text())[oauth_url]["tokens"]["access_token"]
    assert errors == []


def test_sign_in_from_settings_stores_the_tokens(
    browser_context: Any, oauth_xum: tuple[XumServer, FakeLLM], oauth_url: str
) -> None:
    server, _fake = oauth_xum
    (Path(server.root) / "mcp-oauth.json").unlink(missing_ok=True)
    page, _ws, errors = open_new_workspace(browser_context, server, "mcp-oauth")
    page.keyboard.press("Control+Comma")
    section = page.get_by_role("dialog", name="Settings").get_by_test_id("mcp-settings")
    row = section.locator("[data-mcp-server='web']")
    with page.expect_popup() as popup_info:
        row.get_by_role("button", name="Sign in to web").click()
    tab = popup_info.value
    tab.get_by_text("Signed in to web").wait_for()
    assert "/api/mcp/oauth/callback" in tab.url
    row.get_by_test_id("mcp-sign-in").wait_for()
    store = Path(server.root) / "mcp-oauth.json"
    tokens = json.loads(store.read_text())[oauth_url]["tokens"]
    assert tokens["access_token"] and tokens["refresh_token"]
    # The tokens are nowhere in what the page was sent.
    assert tokens["access_token"] not in page.content()
    assert errors == []
