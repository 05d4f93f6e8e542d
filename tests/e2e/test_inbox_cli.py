"""`xum inbox` against a real `xum server` subprocess with two other connected clients: a turn
asks for an approval, every client's inbox shows it, `xum inbox approve` answers it and it
leaves every inbox while the turn goes on; one answered through the workspace's own approval
route leaves `xum inbox` too; the finished turn waits as "ended unread" until read."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cli import run_xum
from tests.support.inbox_watch import InboxWatch
from tests.support.xum_server import xum_server
from xum.host.remote import RemoteHosts
from xum.host.server_target import ServerTarget
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

pytestmark = pytest.mark.timeout(120)

TOKEN = "inbox-cli-token-0123456789abcdef"
MODEL = "anthropic:claude-sonnet-5-5"


def _env(fake: FakeLLM) -> dict[str, str]:
    return {
        "XUM_SERVER_AUTH_TOKEN": TOKEN,
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": fake.url,
    }


async def _inbox(*args: str) -> list[dict[str, Any]]:
    """`xum inbox --json` (the server found through this root's server.lock)."""
    done = await asyncio.to_thread(run_xum, "inbox", "--json", *args)
    assert done.returncode == 0, done.stderr
    items: list[dict[str, Any]] = json.loads(done.stdout)["items"]
    return items


async def _xum(*args: str) -> str:
    done = await asyncio.to_thread(run_xum, "inbox", *args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _kinds(items: dict[str, dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [i for i in items.values() if i["kind"] == kind]


async def test_an_approval_is_answered_from_the_cli_and_leaves_every_inbox(
    fake_llm: FakeLLM, repo: Path
) -> None:
    fake_llm.script(
        fakellm.tool_call("bash", {"script": "touch one.txt", "display_name": "touch"}),
        fakellm.text("Made one."),
        fakellm.tool_call("bash", {"script": "touch two.txt", "display_name": "touch"}),
        fakellm.text("Made two."),
    )
    with xum_server(env=_env(fake_llm)) as url:
        target = ServerTarget(url, TOKEN)
        async with (
            RemoteHosts(target) as api,
            InboxWatch(target.ws_url, TOKEN) as first,
            InboxWatch(target.ws_url, TOKEN) as second,
        ):
            record = await api.create(str(repo), "local", model=MODEL)
            await api.change_settings(record.id, permissions="ask")
            await api.send(record, "make one")
            for watch in (first, second):
                await watch.wait(lambda items: _kinds(items, "approval"))
            listed = await _inbox()
            (item,) = [i for i in listed if i["kind"] == "approval"]
            assert item["workspaceId"] == record.id and item["workspaceName"] == record.name
            assert item["project"] == str(repo) and item["since"] > 0
            assert "touch one.txt" in item["summary"]
            assert item["actions"] == ["once", "always", "deny"]
            assert item["id"] in first.items and item["id"] in second.items
            text = await _xum()
            assert item["id"] in text and "approval" in text
            assert not (repo / "one.txt").exists()  # it waits

            assert "approved (once)" in await _xum("approve", item["id"])
            for watch in (first, second):
                await watch.wait(lambda items: item["id"] not in items)
            # The turn went on and finished: nobody read it, so it waits as a notice.
            await first.wait(lambda items: _kinds(items, "turn-ended"))
            assert (repo / "one.txt").exists()
            (ended,) = _kinds(first.items, "turn-ended")
            assert ended["summary"] == "the turn is done" and ended["actions"] == ["read"]
            again = await asyncio.to_thread(run_xum, "inbox", "approve", item["id"])
            assert again.returncode == 1 and "answered already" in again.stderr

            # Answered through the workspace's own approval route: gone from `xum inbox` too.
            await api.send(record, "make two")
            await second.wait(lambda items: _kinds(items, "approval"))
            (other,) = _kinds(second.items, "approval")
            request_id = other["detail"]["request_id"]
            assert await api.answer_approval(record.id, request_id, "deny", "not now")
            await second.wait(lambda items: other["id"] not in items)
            assert other["id"] not in [i["id"] for i in await _inbox()]
            assert not (repo / "two.txt").exists()

            # Read: the turn's notice leaves every inbox.
            await second.wait(lambda items: _kinds(items, "turn-ended"))
            (notice,) = _kinds(second.items, "turn-ended")
            assert "marked read" in await _xum("read", notice["id"])
            for watch in (first, second):
                await watch.wait(lambda items: not items)
            assert await _inbox() == []


def test_without_a_server_the_inbox_says_how_to_start_one() -> None:
    done = run_xum("inbox")
    assert done.returncode == 1
    assert "no xum server is running" in done.stderr and "xum server" in done.stderr
