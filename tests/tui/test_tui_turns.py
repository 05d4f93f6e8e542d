"""Queueing, interrupting and questions in the terminal UI, against the fake LLM."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.support import (
    held_command,
    model_app,
    on_screen,
    running_forever,
    send,
    start_app,
    started_command,
    turn_ends,
    type_text,
    until,
)
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.tui.transcript import NoticeEntry, ToolEntry, UserEntry


async def test_messages_sent_while_a_turn_runs_are_queued(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script, started, release = held_command(tmp_path, "hold")
    fake_llm.script(
        fakellm.tool_call("bash", {"script": script, "display_name": "held"}),
        fakellm.text("saw the step message"),
        fakellm.text("ran the turn message"),
    )
    app = model_app(monkeypatch, fake_llm, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        ws = await started_command(pilot, started)
        assert ws.running
        await send(pilot, "also this")  # Enter: after the current step
        await send(pilot, "then that", "ctrl+t")  # after the turn
        await until(pilot, lambda: ws.queued == (1, 1), "both messages queued")
        await on_screen(pilot, "queued: 1 step, 1 turn")
        # The live output of the running command is on its card.
        await until(
            pilot,
            lambda: (
                "hold-running"
                in next(e.live for e in ws.transcript.entries if isinstance(e, ToolEntry))
            ),
            "the command's live output",
        )
        await on_screen(pilot, "hold-running")
        release.touch()
        await until(pilot, lambda: not ws.running, "both turns to end")
        users = [e for e in ws.transcript.entries if isinstance(e, UserEntry)]
        assert [(u.text, u.queued) for u in users] == [
            ("start", False),
            ("also this", True),
            ("then that", False),
        ]
        second = fake_llm.requests[1].json["messages"][-1]
        assert [b["type"] for b in second["content"]] == ["tool_result", "text"]
        assert second["content"][1]["text"] == "also this"
        assert fake_llm.requests[2].json["messages"][-1]["content"][0]["text"] == "then that"
        assert turn_ends(ws.id) == ["completed", "completed"]


async def test_esc_interrupts_the_turn_and_hands_back_the_queue(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with running_forever(monkeypatch, fake_llm, tmp_path) as (app, pilot, ws):
        await send(pilot, "never sent", "ctrl+t")
        await until(pilot, lambda: ws.queued == (0, 1), "the message queued")
        await pilot.press("escape")
        await until(pilot, lambda: not ws.running, "the turn to stop")
        assert app.composer.text == "never sent"  # handed back, not run
        assert turn_ends(ws.id) == ["interrupted"]
        assert any(isinstance(e, NoticeEntry) and e.text == "interrupted" for e in ws.transcript)
        tool = next(e for e in ws.transcript.entries if isinstance(e, ToolEntry))
        assert tool.state == "done" and tool.is_error  # the killed command's result
        await on_screen(pilot, "interrupted")
        assert len(fake_llm.requests) == 1


QUESTION = {
    "questions": [
        {
            "question": "Which database should it use?",
            "header": "Database",
            "multiSelect": False,
            "options": [
                {"label": "Postgres", "description": "a server"},
                {"label": "SQLite", "description": "a file"},
            ],
        }
    ]
}


async def test_the_agents_question_is_answered_in_place(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    two = {
        "questions": [
            *QUESTION["questions"],
            {
                "question": "Which cache?",
                "header": "Cache",
                "multiSelect": True,
                "options": [
                    {"label": "Redis", "description": "a server"},
                    {"label": "Memory", "description": "in the process"},
                ],
            },
        ]
    }
    fake_llm.script(fakellm.tool_call("ask_user_question", two), fakellm.text("noted"))
    fake_llm.set_default(fakellm.text("ok"))  # plan mode may add a step for propose_plan
    app = model_app(monkeypatch, fake_llm, tmp_path)
    async with app.run_test(size=(100, 40)) as pilot:
        await start_app(pilot)
        await pilot.press("f4")  # Plan: the agent that may ask
        await on_screen(pilot, "Plan · ")
        await send(pilot, "plan the storage")
        await until(pilot, lambda: app.selected and app.selected.question, "the question")
        await until(pilot, lambda: app.query("QuestionPanel RadioSet:focus"), "its focus")
        ws = app.selected
        assert ws is not None and ws.status == "waiting"
        await on_screen(pilot, "Which database should it use?")
        await on_screen(pilot, "◆")  # the sidebar's needs-input dot
        # The options have the focus: the second one; Tab to the next question, whose first
        # option is picked with Space, then its Other field gets words of our own.
        await pilot.press("down", "enter", "tab", "tab", "space", "tab")
        await type_text(pilot, "on disk")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: len(fake_llm.requests) >= 2, "the answer to reach the model")
        await until(pilot, lambda: not ws.running, "the turn to end")
        sent = fake_llm.requests[1].json["messages"][-1]["content"][0]
        assert sent["type"] == "tool_result"
        assert "A: SQLite" in str(sent["content"])
        assert "A: Redis, on disk" in str(sent["content"])
        assert ws.question is None and not app.query("QuestionPanel")


async def test_a_chat_message_instead_dismisses_the_question(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_llm.script(fakellm.tool_call("ask_user_question", QUESTION))
    fake_llm.set_default(fakellm.text("ok"))
    app = model_app(monkeypatch, fake_llm, tmp_path)
    app.actions.draft_agent = "plan"
    async with app.run_test(size=(100, 40)) as pilot:
        await start_app(pilot)
        await send(pilot, "plan it")
        await until(pilot, lambda: app.selected and app.selected.question, "the question")
        await until(pilot, lambda: app.query("QuestionPanel"), "the question panel")
        ws = app.selected
        assert ws is not None
        await send(pilot, "use whatever you like")
        await until(pilot, lambda: not ws.running, "the turn to end")
        result = fake_llm.requests[1].json["messages"][-1]["content"]
        assert "did not answer" in str(result[0]["content"])
        assert result[1]["text"] == "use whatever you like"


async def test_a_proposed_plan_is_shown_and_carried_out_in_exec(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from xum.store import registry
    from xum.workspaces.state import plan_path

    replies = iter([fakellm.tool_call("propose_plan", {}), fakellm.text("Plan ready.")])

    def plan_turn(request: fakellm.RecordedRequest) -> fakellm.Reply:
        """Writes the plan file, as the model would have, before proposing it."""
        (record,) = registry.list_workspaces()
        path = plan_path(record)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("# The plan\n\n1. Add a `cache` module\n2. Test it\n")
        return next(replies, fakellm.text("Plan ready."))

    app = model_app(monkeypatch, fake_llm, tmp_path)
    app.actions.draft_agent = "plan"
    async with app.run_test(size=(100, 40)) as pilot:
        await start_app(pilot)
        fake_llm.set_responder(plan_turn)
        await send(pilot, "plan a cache")
        await until(
            pilot,
            lambda: app.selected and not app.selected.running and len(fake_llm.requests) >= 2,
            "the plan turn",
        )
        ws = app.selected
        assert ws is not None
        await on_screen(pilot, "plan proposed")
        await on_screen(pilot, "Add a cache module")
        fake_llm.set_responder(lambda request: fakellm.text("Implemented."))
        await pilot.press("ctrl+g")
        await until(pilot, lambda: ws.record.agent == "exec", "the switch to Exec")
        await until(pilot, lambda: len(fake_llm.requests) >= 3 and not ws.running, "the Exec turn")
        last = fake_llm.requests[-1].json
        assert "approved" in last["messages"][-1]["content"][0]["text"]
        assert "propose_plan" not in [t["name"] for t in last["tools"]]  # the exec agent
        await on_screen(pilot, "Implemented.")


async def test_a_sub_agent_task_shows_with_its_status(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from xum.tui.transcript import TaskEntry

    def responder(request: fakellm.RecordedRequest) -> fakellm.Reply:
        said = str(request.json["messages"])
        if "ROLE:child" in str(request.json["messages"][0]):
            return fakellm.text("the helper says hi")
        if "tool_result" in said:
            return fakellm.text("the parent is done")
        return fakellm.tool_call("task", {"title": "Helper", "prompt": "ROLE:child: say hi"})

    fake_llm.set_responder(responder)
    app = model_app(monkeypatch, fake_llm, tmp_path)
    async with app.run_test(size=(100, 40)) as pilot:
        await start_app(pilot)
        await send(pilot, "ROLE:parent: delegate it")
        await until(pilot, lambda: app.selected and app.selected.transcript.last_seq, "a turn")
        ws = app.selected
        assert ws is not None
        await until(pilot, lambda: not ws.running, "the turn to end")
        tasks = [e for e in ws.transcript.entries if isinstance(e, TaskEntry)]
        assert [(t.title, t.status) for t in tasks] == [("Helper", "reported")]
        card = next(e for e in ws.transcript.entries if isinstance(e, ToolEntry))
        assert card.name == "task" and card.state == "done" and not card.is_error
        await on_screen(pilot, "⧉ sub-agent Helper  reported")
        await on_screen(pilot, "the parent is done")
        await on_screen(pilot, "↳ ")  # the child's workspace, listed under the parent's project


async def test_quitting_stops_a_running_turn_and_records_it(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with running_forever(monkeypatch, fake_llm, tmp_path) as (_app, pilot, ws):
        await pilot.press("ctrl+q")
        # Quitting itself stops the turn (not the test's leaving the app, which would too).
        await until(pilot, lambda: turn_ends(ws.id) == ["interrupted"], "the turn recorded")
        assert not ws.running
