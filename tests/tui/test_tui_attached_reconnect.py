"""The terminal UI attached to a running `xum server` (a real subprocess) when its connection
drops: it reconnects and resumes after the last event it received, and what the server sends
again (the reply streaming now, a running command's output so far) replaces what was shown,
instead of showing twice or as a restarted reply."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tui.support import held_command, send, start_app, until
from xum.host.server_target import ServerTarget
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.webui import XumServer, make_repo, start_server
from xum.tui.app import XumApp
from xum.tui.attached import AttachedRunner
from xum.tui.attached_actions import attach_to
from xum.tui.transcript import AssistantEntry, NoticeEntry, ToolEntry

TOKEN = "tui-attached-reconnect-token"


@pytest.fixture
def server(fake_llm: FakeLLM, tmp_path: Path) -> Iterator[XumServer]:
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_llm.url}
    running = start_server(tmp_path / "srv", TOKEN, env, repo=make_repo(tmp_path / "repo"))
    try:
        yield running
    finally:
        running.stop()


def attached(server: XumServer) -> tuple[XumApp, AttachedRunner]:
    app = XumApp(server.repo, attach=attach_to(ServerTarget(server.url, TOKEN)))
    assert isinstance(app.runner, AttachedRunner)
    return app, app.runner


def replies(app: XumApp) -> list[AssistantEntry]:
    ws = app.selected
    return [e for e in ws.transcript.entries if isinstance(e, AssistantEntry)] if ws else []


async def test_a_reply_streaming_through_a_reconnect_shows_once(
    fake_llm: FakeLLM, server: XumServer
) -> None:
    stall = fakellm.Stall(after_event=4)  # the reply holds after its first words
    fake_llm.script(fakellm.text("resumed after the drop, word by word", chunk_size=7, stall=stall))
    app, runner = attached(server)
    async with app.run_test(size=(110, 40)) as pilot:
        await start_app(pilot)
        await send(pilot, "go")
        await until(pilot, lambda: replies(app) and replies(app)[0].text, "the first deltas")
        (before,) = replies(app)
        shown = before.text
        await runner.remote.reconnect()
        await until(pilot, lambda: runner.remote.connections == 2, "the reconnect")
        await until(pilot, lambda: replies(app) and replies(app)[0] is not before, "the resume")
        await until(pilot, lambda: replies(app)[0].text == shown, "the reply so far again")
        ws = app.selected
        assert ws is not None and ws.running
        assert len(replies(app)) == 1
        assert not [e for e in ws.transcript.entries if isinstance(e, NoticeEntry)]
        app.composer.focus()
        await pilot.press("escape")
        await until(pilot, lambda: not ws.running, "the interrupted turn")


async def test_a_running_commands_output_through_a_reconnect_shows_once(
    fake_llm: FakeLLM, server: XumServer, tmp_path: Path
) -> None:
    script, started, release = held_command(tmp_path, "held")
    fake_llm.script(fakellm.tool_call("bash", {"script": script, "display_name": "held"}))
    fake_llm.set_default(fakellm.text("done"))
    app, runner = attached(server)
    async with app.run_test(size=(110, 40)) as pilot:
        await start_app(pilot)
        await send(pilot, "start")
        await until(pilot, started.exists, "the command to start")

        def tool() -> ToolEntry | None:
            ws = app.selected
            found = [e for e in ws.transcript.entries if isinstance(e, ToolEntry)] if ws else []
            return found[0] if found else None

        await until(pilot, lambda: tool() and "held-running" in tool().live, "the output")  # type: ignore[union-attr]
        entry = tool()
        assert entry is not None
        first_start = entry.started
        await runner.remote.reconnect()
        await until(pilot, lambda: entry.started != first_start, "the call sent again")
        await until(pilot, lambda: "held-running" in entry.live, "its output so far again")
        assert entry.live.count("held-running") == 1
        release.touch()
        await until(pilot, lambda: entry.state == "done", "the command's result")
    server.wait_idle(app.selected.id if app.selected else "")
