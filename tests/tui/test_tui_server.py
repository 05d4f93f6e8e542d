"""The terminal UI beside a running `xum server` on the same root: a turn the server runs is
followed, and a message or an interrupt from the terminal reaches it through the server's API."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.tui.support import held_command, send, start_app, turn_ends, until
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.webui import XumServer, make_repo, start_server
from xum.tui.app import XumApp

TOKEN = "tui-server-test-token"


@pytest.fixture
def server(fake_llm: FakeLLM, tmp_path: Path) -> Iterator[XumServer]:
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_llm.url}
    running = start_server(tmp_path / "srv", TOKEN, env, repo=make_repo(tmp_path / "repo"))
    try:
        yield running
    finally:
        running.stop()


def same_root(monkeypatch: pytest.MonkeyPatch, server: XumServer, fake_llm: FakeLLM) -> None:
    monkeypatch.setenv("XUM_ROOT", str(server.root))
    monkeypatch.setenv("HOME", str(server.home))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_llm.url)


def server_turn(server: XumServer, fake_llm: FakeLLM, tmp_path: Path) -> tuple[Any, Path, Path]:
    """A workspace whose turn the server runs, held in a command until the test releases it."""
    script, started, release = held_command(tmp_path, "held")
    fake_llm.script(fakellm.tool_call("bash", {"script": script, "display_name": "held"}))
    fake_llm.set_default(fakellm.text("done"))
    ws = server.create_workspace("shared", runtime="local")
    server.api("POST", f"/api/workspaces/{ws['id']}/messages", json={"text": "start"})
    return ws, started, release


async def following(pilot: Pilot[None], app: XumApp, started: Path) -> None:
    """The UI is up and follows the server's turn, which runs its held command."""
    await start_app(pilot)
    await until(pilot, started.exists, "the server's command to start")
    await until(pilot, lambda: app.selected and app.selected.busy_elsewhere, "the turn elsewhere")


async def test_a_message_joins_the_turn_the_server_runs(
    fake_llm: FakeLLM,
    server: XumServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ws, started, release = server_turn(server, fake_llm, tmp_path)
    same_root(monkeypatch, server, fake_llm)
    app = XumApp(server.repo, workspace=ws["id"])
    async with app.run_test(size=(110, 40)) as pilot:
        await following(pilot, app, started)
        assert app.selected is not None and app.selected.status == "working"
        await send(pilot, "also check the docs")
        # Queued at the server, after the running step.
        await until(
            pilot,
            lambda: server.api("GET", f"/api/workspaces/{ws['id']}")["status"]["queued"]["step"],
            "the message queued at the server",
        )
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
    same_root(monkeypatch, server, fake_llm)
    app = XumApp(server.repo, workspace=ws["id"])
    async with app.run_test(size=(110, 40)) as pilot:
        await following(pilot, app, started)
        app.composer.focus()
        await pilot.press("escape")
        await until(pilot, lambda: "interrupted" in turn_ends(ws["id"]), "the interrupted turn")
    assert len(fake_llm.requests) == 1  # the turn stopped in its command: nothing more was asked


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
    same_root(monkeypatch, server, fake_llm)
    app = XumApp(server.repo, workspace=ws["id"])
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
    same_root(monkeypatch, server, fake_llm)
    app = XumApp(server.repo, workspace=ws["id"])
    async with app.run_test(size=(110, 40)) as pilot:
        await start_app(pilot)
        await until(pilot, lambda: app.query("QuestionPanel RadioSet"), "the server's question")
        app.query_one("QuestionPanel RadioSet").focus()
        await pilot.press("down", "enter", "ctrl+s")
        await until(pilot, lambda: len(fake_llm.requests) >= 2, "the answer to reach the model")
        await until(pilot, lambda: not app.query("QuestionPanel"), "the panel to go")
    server.wait_idle(ws["id"])
    assert "Postgres" in str(fake_llm.requests[1].json["messages"][-1])
