"""Driving the terminal UI in tests: Textual's headless pilot, the fake LLM over HTTP, a real git
repository and a temp $XUM_ROOT. Waits are bounded polls on the app's own state (or the screen's
text) that fail with a message; nothing sleeps to order events."""

from __future__ import annotations

import io
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from rich.console import Console
from textual import events
from textual.keys import _character_to_key  # how the terminal parser names a typed key
from textual.pilot import Pilot

from tests.gitrepo import make_repo
from xum.store.sessionlog import SessionLog
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.tui.app import XumApp
from xum.tui.runner import Workspace
from xum.tui.transcript import Entry

WAIT_S = 20.0
MODEL = "anthropic:claude-sonnet-5-5"


def use_fake_llm(monkeypatch: pytest.MonkeyPatch, server: FakeLLM) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)


def project(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


def model_app(
    monkeypatch: pytest.MonkeyPatch,
    server: FakeLLM,
    tmp_path: Path,
    default: fakellm.Reply | None = None,
) -> XumApp:
    """The app on a fresh project, its draft on MODEL served by the fake LLM (which gives the
    `default` reply when there is one)."""
    use_fake_llm(monkeypatch, server)
    if default is not None:
        server.set_default(default)
    app = XumApp(project(tmp_path))
    app.actions.draft_model = MODEL
    return app


def screen_text(app: XumApp) -> str:
    """What the terminal shows now, as plain text."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), record=True)
    console.print(
        app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    )
    return console.export_text()


async def until(pilot: Pilot[None], check: Callable[[], object], what: str) -> None:
    """Let the app run until `check()` is true; fail naming `what` after WAIT_S."""
    deadline = time.monotonic() + WAIT_S
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(
                f"timed out waiting for {what}\n--- screen ---\n{screen_text(pilot.app)}"
            )  # type: ignore[arg-type]
        await pilot.pause(0.02)


async def on_screen(pilot: Pilot[None], text: str) -> None:
    await until(pilot, lambda: text in screen_text(pilot.app), f"{text!r} on screen")  # type: ignore[arg-type]


async def type_text(pilot: Pilot[None], text: str) -> None:
    """Type `text` into the focused widget: one key event per character (spaces and all), named
    as Textual's terminal parser names it, all queued at once as a fast typist's or a burst of
    terminal input arrives, then wait until the app and the widget have handled them.

    Not `pilot.press(*keys)`: it waits twice for the process to look idle after every key (20 ms
    at least, more while a turn streams), which made typing most of a TUI test's time. Plain
    characters never move the focus, so every key still reaches the same widget in order; keys
    that act (enter, ctrl+...) go through `pilot.press`."""
    app = pilot.app
    for ch in text:
        key = events.Key(_character_to_key(ch), ch)
        key.set_sender(app)
        app.post_message(key)
    # The first settles the app, which forwards the keys to the focused widget's queue; the
    # second, whose marker now queues behind them there, settles the widget.
    await pilot.pause()
    await pilot.pause()


def entries(app: XumApp) -> list[Entry]:
    ws = app.selected
    return list(ws.transcript.entries) if ws is not None else list(app.draft.entries)


def held_command(tmp_path: Path, name: str) -> tuple[str, Path, Path]:
    """A bash script that says it started (a file) and runs until the test releases it (another
    file): the test decides when the tool call ends."""
    started, release = tmp_path / f"{name}.started", tmp_path / f"{name}.release"
    script = f"touch {started}; echo {name}-running; while [ ! -e {release} ]; do sleep 0.01; done"
    return script, started, release


def hold_forever(server: FakeLLM, tmp_path: Path) -> Path:
    """Script the fake LLM's one reply: a command that runs until the test ends (never released).
    The file that says it started."""
    script, started, _release = held_command(tmp_path, "forever")
    server.script(fakellm.tool_call("bash", {"script": script, "display_name": "forever"}))
    return started


async def start_app(pilot: Pilot[None]) -> None:
    app = pilot.app
    assert isinstance(app, XumApp)
    await until(pilot, app.ready.is_set, "the workspace list")


async def send(pilot: Pilot[None], text: str, key: str = "enter") -> None:
    app = pilot.app
    assert isinstance(app, XumApp)
    app.composer.focus()
    await type_text(pilot, text)
    await pilot.press(key)


def notified(app: XumApp, text: str) -> bool:
    """Whether a notification (a toast) with `text` was raised."""
    return any(text in n.message for n in app._notifications)


async def first_turn(pilot: Pilot[None], text: str, what: str) -> Workspace:
    """Once the app is up, send `text` and wait (`what`) until its turn ends; the workspace it
    ran in."""
    app = pilot.app
    assert isinstance(app, XumApp)
    await start_app(pilot)
    await send(pilot, text)
    # A new workspace is selected before its turn starts: wait for the turn's end in its log.
    await until(
        pilot,
        lambda: app.selected and not app.selected.running and turn_ends(app.selected.id),
        what,
    )
    ws = app.selected
    assert ws is not None
    return ws


async def started_command(pilot: Pilot[None], started: Path) -> Workspace:
    """Once the app is up, send "start" and wait for the command it runs to start; its workspace."""
    app = pilot.app
    assert isinstance(app, XumApp)
    await start_app(pilot)
    await send(pilot, "start")
    await until(pilot, started.exists, "the command to start")
    ws = app.selected
    assert ws is not None
    return ws


@asynccontextmanager
async def running_forever(
    monkeypatch: pytest.MonkeyPatch, server: FakeLLM, tmp_path: Path
) -> AsyncIterator[tuple[XumApp, Pilot[None], Workspace]]:
    """The app (30 rows) with its first turn running a command that never ends (see
    `hold_forever`), once that has started: (the app, its pilot, the workspace)."""
    started = hold_forever(server, tmp_path)
    app = model_app(monkeypatch, server, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        yield app, pilot, await started_command(pilot, started)


def turn_ends(workspace_id: str) -> list[str]:
    """How each turn of the workspace's session ended, from its log."""
    log = SessionLog.open(workspace_id)
    try:
        return [str(f.data.get("reason")) for f in log.frames if f.type == "turn_end"]
    finally:
        log.close()
