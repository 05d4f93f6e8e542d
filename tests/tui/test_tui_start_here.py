"""Start Here in the terminal UI: a final reply becomes the model's whole context."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.support import MODEL, on_screen, project, send, start_app, until, use_fake_llm
from xum.store.sessionlog import SessionLog
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.tui.app import XumApp


def compactions(workspace_id: str) -> list[dict[str, object]]:
    log = SessionLog.open(workspace_id)
    try:
        return [dict(f.data) for f in log.frames if f.type == "compaction"]
    finally:
        log.close()


async def test_f7_restarts_the_context_from_the_last_final_reply(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    fake_llm.script(
        fakellm.text("First answer, about the old approach."),
        fakellm.text("Use the queue; keep the worker stateless."),
        fakellm.text("Starting from the queue design."),
    )
    app = XumApp(project(tmp_path))
    app.actions.draft_model = MODEL
    async with app.run_test(size=(110, 40)) as pilot:
        await start_app(pilot)
        await send(pilot, "what did we try before")
        await until(pilot, lambda: app.selected and not app.selected.running, "the first turn")
        ws = app.selected
        assert ws is not None
        await send(pilot, "so what should we do")
        await until(pilot, lambda: len(fake_llm.requests) >= 2, "the second request")
        await until(pilot, lambda: not ws.running, "the second turn")
        await pilot.press("f7")
        await on_screen(pilot, "Start Here: the model continues from that message alone")
        [boundary] = compactions(ws.id)
        assert boundary["trigger"] == "start_here"
        await send(pilot, "go on")
        await until(pilot, lambda: len(fake_llm.requests) >= 3, "the request after it")
        await until(pilot, lambda: not ws.running, "the third turn")
    after = str(fake_llm.requests[2].json["messages"])
    assert "Use the queue; keep the worker stateless." in after
    # Nothing from before that reply reaches the model any more.
    assert "what did we try before" not in after and "old approach" not in after


async def test_f7_without_a_final_reply_says_so(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    app = XumApp(project(tmp_path))
    app.actions.draft_model = MODEL
    async with app.run_test(size=(110, 40)) as pilot:
        await start_app(pilot)
        await pilot.press("f7")
        await until(
            pilot,
            lambda: any("Start Here needs a plan" in n.message for n in app._notifications),
            "the notice",
        )


def test_a_plan_card_and_a_final_reply_are_where_start_here_starts() -> None:
    from xum.engine import events as E
    from xum.tui.transcript import Transcript

    def reply(seq: int, text: str, calls: list[dict[str, str]]) -> E.AssistantMessage:
        return E.AssistantMessage(
            seq=seq,
            ts=0,
            text=text,
            reasoning="",
            tool_calls=calls,
            finish_reason="stop",
            usage=None,
            cost_usd=None,
        )

    t = Transcript()
    assert t.start_here_seq() is None
    t.fold(reply(3, "Done.", []))
    assert t.start_here_seq() == 3
    calls = [{"id": "c1", "name": "bash", "arguments": "{}"}]
    t.fold(reply(4, "Running it.", calls))
    assert t.start_here_seq() == 3  # a reply with tool calls is not one to start from
    plan = {"path": "/tmp/plan.md", "content": "1. Do it"}
    t.fold(
        E.ToolResult(
            seq=6,
            ts=0,
            call_id="p1",
            name="propose_plan",
            is_error=False,
            output="ok",
            meta={"plan": plan},
        )
    )
    assert t.start_here_seq() == 6
