"""MCP resources in the browser composer, against a real `xum server` with a real SDK server
offering resources: typing `@` suggests `server:uri` next to the files, Enter takes one, and the
message sent carries the resource to the model while the conversation shows what was typed."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser_support import (
    XumServer,
    browser_fake,
    fake_env,
    open_new_workspace,
    serving,
)
from tests.mcp import resource_server
from xum.testing.fakellm import FakeLLM

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


@pytest.fixture(scope="module")
def resources_server(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[XumServer, FakeLLM]]:
    """A server of its own: this module writes the MCP config file."""
    with (
        browser_fake() as fake,
        serving(tmp_path_factory.mktemp("mcp-res"), fake_env(fake)) as server,
    ):
        command = f"{sys.executable} {Path(resource_server.__file__)}"
        (server.root / "mcp.jsonc").write_text(json.dumps({"servers": {"r": command}}))
        yield server, fake


def test_at_suggests_resources_and_the_message_carries_one(
    browser_context: Any, resources_server: tuple[XumServer, FakeLLM]
) -> None:
    server, fake = resources_server
    page, _ws, errors = open_new_workspace(browser_context, server, "mcp-res")
    box = page.locator("textarea[data-composer]")
    box.press_sequentially("summarize @readm")
    listbox = page.get_by_role("listbox", name="File mentions")
    option = listbox.get_by_role("option", name="@r:notes://readme")
    option.wait_for()
    assert "MCP resource" in option.inner_text()
    box.press("Enter")  # takes the highlighted suggestion; does not send
    assert box.input_value() == "summarize @r:notes://readme "
    box.press_sequentially("please")
    box.press("Enter")
    page.locator("[data-role='assistant']").first.wait_for()
    sent = json.dumps(fake.requests[-1].json["messages"])
    assert resource_server.RESOURCE_MARK in sent and "<mcp-resource server=" in sent
    # The conversation shows the message as typed, not the attached text.
    user = page.locator("[data-role='user']").first
    assert "summarize @r:notes://readme please" in user.inner_text()
    assert resource_server.RESOURCE_MARK not in user.inner_text()
    assert errors == []
