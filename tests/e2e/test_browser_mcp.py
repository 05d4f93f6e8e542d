"""Settings → MCP and the workspace MCP dialog in the browser against a real `xum server`: a
server added, tested (its tools shown) and removed, a broken one whose Test shows the
connection error inline, the tool search switch, and a workspace's overrides saved to its
`.xum/mcp.local.jsonc` and picked up by the next message."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser_support import (
    TOKEN,
    XumServer,
    browser_fake,
    fake_env,
    open_new_workspace,
    open_workspace,
    screenshot,
    send,
    serving,
)
from tests.mcp.support import server_command
from xum.core.jsonc import parse_jsonc
from xum.testing.fakellm import FakeLLM

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


@pytest.fixture(scope="module")
def mcp_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[XumServer, FakeLLM]]:
    """A server of its own: this module writes the MCP config files."""
    with (
        browser_fake() as fake,
        serving(tmp_path_factory.mktemp("mcp-ui"), fake_env(fake)) as server,
    ):
        yield server, fake


def open_settings(page: Any) -> Any:
    page.keyboard.press("Control+Comma")
    return page.get_by_role("dialog", name="Settings").get_by_test_id("mcp-settings")


def test_add_test_and_remove_servers_in_settings(
    browser_context: Any, mcp_server: tuple[XumServer, FakeLLM]
) -> None:
    server, _fake = mcp_server
    page, _ws, errors = open_new_workspace(browser_context, server, "mcp-settings")
    section = open_settings(page)
    glob = section.get_by_test_id("mcp-global")

    for name, command in (
        ("tester", server_command()),
        ("broken", server_command("--exit-at-start")),
    ):
        glob.get_by_role("button", name="Add a global server").click()
        form = glob.get_by_role("form", name="Add a global MCP server")  # in its own section
        form.get_by_label("Server name").fill(name)
        form.get_by_label("Server command").fill(command)
        form.get_by_label("Variables").fill("MCP_TEST_TOOLS=echo,whoami")
        form.get_by_role("button", name="Save server").click()
        glob.locator(f'[data-mcp-server="{name}"]').wait_for()

    saved = parse_jsonc((server.root / "mcp.jsonc").read_text(), path="mcp.jsonc")
    assert saved["servers"]["tester"]["env"] == {"MCP_TEST_TOOLS": "echo,whoami"}
    row = glob.locator('[data-mcp-server="tester"]')
    assert "MCP_TEST_TOOLS" in row.inner_text() and "echo,whoami" not in row.inner_text()

    row.get_by_role("button", name="Test", exact=True).click()
    result = row.get_by_test_id("mcp-test-result")
    result.wait_for()
    assert "Connected: 2 tools (echo, whoami)" in result.inner_text()
    broken = glob.locator('[data-mcp-server="broken"]')
    broken.get_by_role("button", name="Test", exact=True).click()
    failure = broken.get_by_role("alert")
    failure.wait_for()
    assert "Connection failed" in failure.inner_text()
    assert "refusing to start" in failure.inner_text()
    screenshot(page, "mcp-settings")

    search = section.get_by_label("Tool search")
    assert search.is_checked()
    search.click()
    _wait_file(server.root / "mcp.jsonc", lambda data: data.get("toolSearch") is False)

    # The project's repository servers: listed, but not run while the project is untrusted.
    repo = section.get_by_test_id("mcp-repo")
    repo.wait_for()
    assert "not trusted" in repo.inner_text()

    broken.get_by_role("button", name="Remove broken").click()
    broken.wait_for(state="detached")
    _wait_file(server.root / "mcp.jsonc", lambda data: "broken" not in data["servers"])
    assert errors == []


def test_workspace_dialog_turns_a_server_off_for_the_next_message(
    browser_context: Any, mcp_server: tuple[XumServer, FakeLLM]
) -> None:
    server, fake = mcp_server
    (server.root / "mcp.jsonc").write_text(
        json.dumps(
            {
                "servers": {"tester": server_command(), "other": server_command()},
                "toolSearch": False,
            }
        )
    )
    ws = server.create_workspace("mcp-dialog", runtime="worktree")
    page = browser_context.new_page()
    page.goto(f"{server.url}/?token={TOKEN}")
    open_workspace(page, ws["id"])
    row = page.locator(f'.ws-row[data-workspace-id="{ws["id"]}"]')
    row.hover()
    row.get_by_role("button", name="Workspace MCP servers").click()
    dialog = page.get_by_role("dialog", name="Workspace MCP servers")
    dialog.get_by_label("Enable other").uncheck()
    dialog.get_by_label("Allowed tools of tester").fill("echo")
    dialog.get_by_role("button", name="Save").click()
    dialog.wait_for(state="detached")
    local = Path(ws["path"]) / ".xum" / "mcp.local.jsonc"
    data = parse_jsonc(local.read_text(), path=str(local))
    assert data == {"servers": {"other": {"enabled": False}, "tester": {"allowedTools": ["echo"]}}}
    exclude = Path(server.repo) / ".git" / "info" / "exclude"
    assert "/.xum/mcp.local.jsonc" in exclude.read_text()

    # The next message's request offers only what the workspace allows.
    before = len(fake.requests)
    send(page, "which tools do you have?")
    deadline = time.monotonic() + 30
    while len(fake.requests) <= before:
        assert time.monotonic() < deadline, "the message never reached the model"
        time.sleep(0.05)
    names = [t["name"] for t in fake.requests[before].json["tools"]]
    assert [n for n in names if n.startswith("mcp__")] == ["mcp__tester__echo"]


def _wait_file(path: Path, check: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if check(parse_jsonc(path.read_text(), path=str(path))):
                return
        except Exception:
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"{path} never reached the expected content")
        time.sleep(0.05)
