"""The terminal UI attached to a running `xum server` (a real subprocess on its own root): the
server runs the turns, the UI shows them token by token from the server's WebSocket, and what
the user does (send, queue, interrupt, answer an approval or a question) goes through the
server's API. The server is found as `xum tui` finds it: through `$XUM_ROOT/server.lock`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.tui.support import held_command, screen_text, send, start_app, turn_ends, until
from xum.host.server_target import ServerTarget, attach_target
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.webui import XumServer, make_repo, start_server
from xum.tui.app import XumApp
from xum.tui.attached_actions import attach_to
from xum.tui.transcript import AssistantEntry

TOKEN = "tui-server-test-token"


@pytest.fixture
def server(fake_llm: FakeLLM, tmp_path: Path) -> Iterator[XumServer]:
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_llm.url}
    running = start_server(tmp_path / "srv", TOKEN, env, repo=make_repo(tmp_path / "repo"))
    try:
        yield running
    finally:
        running.stop()


def attached_app(
    monkeypatch: pytest.MonkeyPatch, server: XumServer, workspace: str | None = None
) -> XumApp:
    """The UI on the server's root, attached to the server its `server.lock` names. This
    process has no provider: whatever a model answers, the server asked for it."""
    monkeypatch.setenv("XUM_ROOT", str(server.root))
    monkeypatch.setenv("HOME", str(server.home))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    target = attach_target(None, None, env={})
    assert target is not None
    assert target == ServerTarget(server.url, TOKEN)  # the lock's URL and token
    return XumApp(server.repo, workspace=workspace, attach=attach_to(target))


def server_turn(server: XumServer, fake_llm: FakeLLM, tmp_path: Path) -> tuple[Any, Path, Path]:
    """A workspace whose turn the server runs, held in a command until the test releases it."""
    script, started, release = held_command(tmp_path, "held")
    fake_llm.script(fakellm.tool_call("bash", {"script": script, "display_name": "held"}))
    fake_llm.set_default(fakellm.text("done"))
    ws = server.create_workspace("shared", runtime="local")
    server.api("POST", f"/api/workspaces/{ws['id']}/messages", json={"text": "start"})
    return ws, started, release


async def following(pilot: Pilot[None], app: XumApp, started: Path) -> None:
    """The UI is up and shows the server's turn, which runs its held command."""
    await start_app(pilot)
    await until(pilot, started.exists, "the server's command to start")
    await until(pilot, lambda: app.selected and app.selected.running, "the server's turn")


def reply_text(app: XumApp) -> str:
    ws = app.selected
    assert ws is not None
    return "".join(e.text for e in ws.transcript.entries if isinstance(e, AssistantEntry))


async def test_a_message_sent_here_streams_from_the_server_token_by_token(
    fake_llm: FakeLLM,
    server: XumServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The reply stops after its first words and holds: what shows came as deltas, live.
    stall = fakellm.Stall(after_event=4)
    fake_llm.script(
        fakellm.text("streamed from the server, word by word", chunk_size=6, stall=stall)
    )
    app = attached_app(monkeypatch, server)
    async with app.run_test(size=(110, 40)) as pilot:
        await start_app(pilot)
        await send(pilot, "hello server")
        await until(pilot, lambda: app.selected is not None, "the new workspace")
        ws = app.selected
        assert ws is not None and ws.remote is not None
        await until(pilot, lambda: reply_text(app).startswith("stream"), "the first deltas")
        assert ws.running and "word by word" not in reply_text(app)
        await until(pilot, lambda: "› hello server" in screen_text(app), "the message drawn")
        await until(pilot, lambda: "stream" in screen_text(app), "the deltas drawn")
        assert ws.running
        (request,) = fake_llm.requests  # the server asked the model, with what was typed here
        assert "hello server" in str(request.json["messages"][-1])
        app.composer.focus()
        await pilot.press("escape")  # the server stops its turn
        await until(pilot, lambda: not ws.running, "the interrupted turn to end")
    record = server.wait_idle(ws.id)
    assert record["projectPath"] == str(server.repo)
    assert turn_ends(ws.id) == ["interrupted"]


async def test_a_message_sent_through_the_api_shows_here_live(
    fake_llm: FakeLLM,
    server: XumServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ws = server.create_workspace("shared", runtime="local")
    fake_llm.script(fakellm.text("an answer the browser asked for", chunk_size=8, delay=0.01))
    app = attached_app(monkeypatch, server, ws["id"])
    async with app.run_test(size=(110, 40)) as pilot:
        await start_app(pilot)
        await until(pilot, lambda: app.selected and app.selected.loaded, "the workspace open")
        server.api("POST", f"/api/workspaces/{ws['id']}/messages", json={"text": "from the api"})
        await until(pilot, lambda: "from the api" in screen_text(app), "the API's message")
        await until(
            pilot, lambda: "the browser asked for" in screen_text(app), "the server's reply"
        )
    server.wait_idle(ws["id"])


async def test_a_message_joins_the_turn_the_server_runs(
    fake_llm: FakeLLM,
    server: XumServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ws, started, release = server_turn(server, fake_llm, tmp_path)
    app = attached_app(monkeypatch, server, ws["id"])
    async with app.run_test(size=(110, 40)) as pilot:
        await following(pilot, app, started)
        assert app.selected is not None and app.selected.status == "working"
        await send(pilot, "also check the docs")
        # Queued at the server, after the running step; the bar counts it.
        await until(pilot, lambda: app.selected.queued == (1, 0), "the message queued")  # type: ignore[union-attr]
        assert server.api("GET", f"/api/workspaces/{ws['id']}")["status"]["queued"]["step"] == 1
        release.touch()
        await until(pilot, lambda: len(fake_llm.requests) >= 2, "the next request")
    server.wait_idle(ws["id"])
    assert "also check the docs" in str(fake_llm.requests[1].json["messages"][-1])


async def test_esc_interrupts_the_turn_the_server_runs(
    fake_llm: FakeLLM,
    server: XumServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ws, started, _release = server_turn(server, fake_llm, tmp_path)
    app = attached_app(monkeypatch, server, ws["id"])
    async with app.run_test(size=(110, 40)) as pilot:
        await following(pilot, app, started)
        app.composer.focus()
        await pilot.press("escape")
        await until(pilot, lambda: "interrupted" in turn_ends(ws["id"]), "the interrupted turn")
    assert len(fake_llm.requests) == 1  # the turn stopped in its command: nothing more was asked


async def test_quitting_leaves_the_servers_turn_running(
    fake_llm: FakeLLM,
    server: XumServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ws, started, release = server_turn(server, fake_llm, tmp_path)
    app = attached_app(monkeypatch, server, ws["id"])
    async with app.run_test(size=(110, 40)) as pilot:
        await following(pilot, app, started)
        await pilot.press("ctrl+q")
    status = server.api("GET", f"/api/workspaces/{ws['id']}")["status"]
    assert status["state"] == "streaming"  # the server's turn, not the UI's: it goes on
    release.touch()
    assert server.wait_idle(ws["id"])["status"]["state"] == "idle"
    assert turn_ends(ws["id"]) == ["completed"]


async def test_the_server_turns_approval_is_answered_here(
    fake_llm: FakeLLM,
    server: XumServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    marker = tmp_path / "pushed.marker"
    script = f"git push --force nowhere main 2>/dev/null; touch {marker}"
    fake_llm.script(fakellm.tool_call("bash", {"script": script, "display_name": "push"}))
    fake_llm.set_default(fakellm.text("done"))
    ws = server.create_workspace("shared", runtime="local")
    server.api("POST", f"/api/workspaces/{ws['id']}/messages", json={"text": "push it"})
    app = attached_app(monkeypatch, server, ws["id"])
    async with app.run_test(size=(110, 40)) as pilot:
        await start_app(pilot)
        await until(pilot, lambda: app.query("ApprovalPanel Input:focus"), "the server's request")
        selected = app.selected
        assert selected is not None and selected.status == "waiting"
        assert not marker.exists()
        await pilot.press("ctrl+y")
        await until(pilot, marker.exists, "the approved command to run at the server")
        await until(pilot, lambda: not app.query("ApprovalPanel"), "the panel to go")
    server.wait_idle(ws["id"])


async def test_the_server_turns_question_is_answered_here(
    fake_llm: FakeLLM,
    server: XumServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    question = {
        "question": "Which database?",
        "header": "Database",
        "multiSelect": False,
        "options": [
            {"label": "SQLite", "description": "a file"},
            {"label": "Postgres", "description": "a server"},
        ],
    }
    fake_llm.script(fakellm.tool_call("ask_user_question", {"questions": [question]}))
    fake_llm.set_default(fakellm.text("noted"))
    ws = server.create_workspace("shared", runtime="local")
    server.api("PATCH", f"/api/workspaces/{ws['id']}", json={"agent": "plan"})
    server.api("POST", f"/api/workspaces/{ws['id']}/messages", json={"text": "plan it"})
    app = attached_app(monkeypatch, server, ws["id"])
    async with app.run_test(size=(110, 40)) as pilot:
        await start_app(pilot)
        await until(pilot, lambda: app.query("QuestionPanel RadioSet"), "the server's question")
        app.query_one("QuestionPanel RadioSet").focus()
        await pilot.press("down", "enter", "ctrl+s")
        await until(pilot, lambda: len(fake_llm.requests) >= 2, "the answer to reach the model")
        await until(pilot, lambda: not app.query("QuestionPanel"), "the panel to go")
    server.wait_idle(ws["id"])
    assert "Postgres" in str(fake_llm.requests[1].json["messages"][-1])
