"""The terminal UI over the workspace host (`xum.host`): a goal set in the UI goes on by itself
as in `xum run`, and a model change reaches the open session for its next turn without
reopening it. Through Textual's pilot, against the fake LLM."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.support import (
    first_turn,
    held_command,
    model_app,
    notified,
    send,
    start_app,
    started_command,
    turn_ends,
    until,
)
from xum.engine import events as E
from xum.engine.derive import frame_event
from xum.store import compaction_config
from xum.store.sessionlog import SessionLog
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

HAIKU = "anthropic:claude-haiku-5-5"


def user_kinds(workspace_id: str) -> list[str]:
    """The kind of each user message in the workspace's log (a goal's continuations say so)."""
    log = SessionLog.open(workspace_id)
    try:
        events = [frame_event(f) for f in log.frames]
    finally:
        log.close()
    return [e.kind or "user" for e in events if isinstance(e, E.UserMessage)]


async def test_a_goal_set_in_the_ui_continues_by_itself(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The model never completes the goal: the host's drive loop continues it up to its cap.
    app = model_app(monkeypatch, fake_llm, tmp_path, fakellm.text("Still working on it."))
    async with app.run_test(size=(100, 30)) as pilot:
        ws = await first_turn(pilot, "hello", "the first turn")
        # The fake records a request as its reply ends: the UI may show the reply first.
        await until(pilot, lambda: len(fake_llm.requests) == 1, "the first request recorded")
        await send(pilot, "/goal --turns 2 tidy the module")
        await until(pilot, lambda: len(fake_llm.requests) >= 3, "a continuation's request")
        await until(pilot, lambda: not ws.running, "the goal's turns to end")
        kinds = user_kinds(ws.id)
        assert "goal_continuation" in kinds, kinds
        assert len(turn_ends(ws.id)) >= 3  # hello, the goal's kickoff, a continuation


async def test_slash_model_reaches_the_open_session_without_reopening(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = model_app(monkeypatch, fake_llm, tmp_path, fakellm.text("ok"))
    async with app.run_test(size=(100, 30)) as pilot:
        ws = await first_turn(pilot, "first", "the first turn")
        session = ws.session
        assert session is not None
        await send(pilot, "/model haiku")
        await until(pilot, lambda: ws.record.model == HAIKU, "the model stored")
        assert ws.session is session  # the same open session, not closed
        await send(pilot, "again")
        await until(pilot, lambda: len(fake_llm.requests) == 2 and not ws.running, "a turn")
        assert fake_llm.requests[1].json["model"] == "claude-haiku-5-5"
        assert ws.session is session


async def test_a_model_picked_while_a_turn_runs_applies_to_the_next_turn(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script, started, release = held_command(tmp_path, "hold")
    fake_llm.script(
        fakellm.tool_call("bash", {"script": script, "display_name": "held"}),
        fakellm.text("the step is done"),
        fakellm.text("on the new model"),
    )
    app = model_app(monkeypatch, fake_llm, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        ws = await started_command(pilot, started)
        session = ws.session
        assert session is not None and ws.running
        assert await app.actions.set_model(ws, HAIKU)  # what the model picker does
        release.touch()
        await until(pilot, lambda: not ws.running, "the turn to end")
        # The running turn kept the model it started with.
        assert [r.json["model"] for r in fake_llm.requests] == ["claude-sonnet-5-5"] * 2
        await send(pilot, "next")
        await until(pilot, lambda: len(fake_llm.requests) == 3 and not ws.running, "a turn")
        assert fake_llm.requests[2].json["model"] == "claude-haiku-5-5"
        assert ws.session is session


async def test_slash_idle_is_carried_out_by_the_command_layer(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = model_app(monkeypatch, fake_llm, tmp_path, fakellm.text("ok"))
    async with app.run_test(size=(100, 30)) as pilot:
        ws = await first_turn(pilot, "first", "the first turn")
        await send(pilot, "/idle 6")
        await until(pilot, lambda: notified(app, "idle compaction: after 6"), "the notice")
        assert compaction_config.idle_hours(ws.record.project_path) == 6
        assert len(fake_llm.requests) == 1  # nothing went to the model


async def test_a_command_the_ui_does_not_know_is_refused_in_the_transcript(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = model_app(monkeypatch, fake_llm, tmp_path, fakellm.text("ok"))
    async with app.run_test(size=(100, 30)) as pilot:
        await start_app(pilot)
        await send(pilot, "/idle soon")
        await until(
            pilot,
            lambda: any("idle" in getattr(e, "message", "") for e in app.draft.entries),
            "the refusal",
        )
        assert not fake_llm.requests
