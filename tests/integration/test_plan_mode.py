"""Plan mode against the fake LLM server: the plan-file lock, propose_plan, edits made outside
xum, ask_user_question, the required tool, and switching between plan and exec."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path

import pytest

from tests.contextkit import bump, workspace_context
from tests.gitrepo import make_repo
from tests.integration.context_harness import ContextHarness, description_of, texts_of
from tests.support.engine import engine_session
from xum.context.frozen import prefix_breaks
from xum.context.workspace import AgentSelection
from xum.engine.agent import SessionSettings, WorkspaceInfo
from xum.llm.client import open_client
from xum.store import frame_types as ev
from xum.store import registry
from xum.store.sessionlog import SessionLog
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM, RecordedRequest
from xum.tools.ask_user_question import NO_USER
from xum.tools.base import Question
from xum.workspaces.assembly import subagent_manager
from xum.workspaces.subagents.manager import TaskSettings


@pytest.fixture
async def harness(fake_llm: FakeLLM, tmp_path: Path) -> AsyncIterator[ContextHarness]:
    h = ContextHarness(fake_llm, make_repo(tmp_path / "repo"))
    yield h
    await h.close()


def results(h: ContextHarness) -> list[dict[str, object]]:
    return [e for e in h.events if e["type"] == "tool-result"]


async def write_and_propose(fake_llm: FakeLLM, h: ContextHarness, plan: str) -> None:
    fake_llm.script(
        fakellm.tool_call("file_edit_insert", {"path": str(h.plan_file), "content": plan}),
        fakellm.tool_call("propose_plan", {}),
        fakellm.text("The plan is ready for review."),
    )


async def test_in_plan_mode_only_the_plan_file_can_be_edited(
    fake_llm: FakeLLM, harness: ContextHarness
) -> None:
    fake_llm.script(
        fakellm.tool_call(
            "file_edit_replace_string",
            {"path": "app.py", "old_string": "'hi'", "new_string": "'hello'"},
        ),
        fakellm.tool_call("file_edit_insert", {"path": "NOTES.md", "content": "sneaky"}),
    )
    await write_and_propose(fake_llm, harness, "# Plan\n\n1. Say hello.\n")
    session = harness.session("plan")
    result = await session.run_turn("plan the greeting change")
    outputs = results(harness)
    assert [r["is_error"] for r in outputs] == [True, True, False, False]
    assert "only to the plan file" in str(outputs[0]["output"])
    assert (harness.repo / "app.py").read_text() == "def greet():\n    return 'hi'\n"
    assert not (harness.repo / "NOTES.md").exists()
    assert harness.plan_file.read_text() == "# Plan\n\n1. Say hello.\n"
    assert result.plan_proposed and result.plan_file == str(harness.plan_file)
    assert (harness.plan_file.parent.stat().st_mode & 0o777) == 0o700
    proposed = [e for e in harness.events if e["type"] == "plan-proposed"]
    assert proposed and proposed[0]["content"] == "# Plan\n\n1. Say hello.\n"
    assert proposed[0]["path"] == str(harness.plan_file)


async def test_exec_mode_edits_anything_and_has_no_plan_tools(
    fake_llm: FakeLLM, harness: ContextHarness
) -> None:
    fake_llm.script(
        fakellm.tool_call(
            "file_edit_replace_string",
            {"path": "app.py", "old_string": "'hi'", "new_string": "'hello'"},
        ),
        fakellm.text("done"),
    )
    await harness.session("exec").run_turn("say hello")
    assert "hello" in (harness.repo / "app.py").read_text()
    names = [t["name"] for t in fake_llm.requests[0].json["tools"]]
    assert "propose_plan" not in names and "ask_user_question" not in names
    assert "<plan-mode>" not in fake_llm.requests[0].json["system"][0]["text"]


async def test_an_outside_edit_of_the_plan_reaches_the_model_as_a_diff(
    fake_llm: FakeLLM, harness: ContextHarness
) -> None:
    await write_and_propose(fake_llm, harness, "# Plan\n\n1. Say hello.\n2. Add a test.\n")
    session = harness.session("plan")
    await session.run_turn("plan it")
    # The user edits the plan in their editor.
    harness.plan_file.write_text("# Plan\n\n1. Say hello loudly.\n2. Add a test.\n")
    bump(harness.plan_file)
    fake_llm.script(fakellm.tool_call("propose_plan", {}), fakellm.text("Updated."))
    await session.run_turn("I tweaked step 1, take a look")
    request = fake_llm.requests[3]
    texts = texts_of(request)
    row = next(t for t in texts if "<plan-file-changed" in t)
    assert "-1. Say hello.\n+1. Say hello loudly." in row
    assert texts.index(row) == len(texts) - 2  # right before the new user message
    assert texts[-1] == "I tweaked step 1, take a look"
    frames = SessionLog.open(harness.ws_id).frames
    update = next(f for f in frames if f.type == ev.SYNTHETIC_MESSAGE)
    assert update.data["kind"] == "context_update" and "plan_file" in update.data["changed"]
    assert "loudly" in update.data["plan"]["content"]
    # Nothing changed since: no new row.
    fake_llm.script(fakellm.tool_call("propose_plan", {}), fakellm.text("Still fine."))
    await session.run_turn("ok?")
    assert sum("<plan-file-changed" in t for t in texts_of(fake_llm.requests[-1])) == 1


async def test_the_models_own_plan_edits_are_not_reported_as_outside_edits(
    fake_llm: FakeLLM, harness: ContextHarness
) -> None:
    await write_and_propose(fake_llm, harness, "# Plan\n\n1. First.\n")
    session = harness.session("plan")
    await session.run_turn("plan it")
    fake_llm.script(
        fakellm.tool_call(
            "file_edit_replace_string",
            {"path": str(harness.plan_file), "old_string": "First.", "new_string": "Revised."},
        ),
        fakellm.tool_call("propose_plan", {}),
        fakellm.text("Revised."),
    )
    await session.run_turn("revise step one")
    fake_llm.script(fakellm.tool_call("propose_plan", {}), fakellm.text("ok"))
    await session.run_turn("anything else?")
    assert not any("<plan-file-changed" in t for r in fake_llm.requests for t in texts_of(r))
    snapshots = [f for f in SessionLog.open(harness.ws_id).frames if f.type == ev.PLAN_SNAPSHOT]
    assert snapshots and "Revised." in snapshots[-1].data["content"]


async def test_ask_user_question_without_a_user_tells_the_model_to_proceed(
    fake_llm: FakeLLM, harness: ContextHarness
) -> None:
    question = {
        "question": "Which database?",
        "header": "Database",
        "multiSelect": False,
        "options": [
            {"label": "Postgres", "description": "the usual"},
            {"label": "SQLite", "description": "simpler"},
        ],
    }
    fake_llm.script(fakellm.tool_call("ask_user_question", {"questions": [question]}))
    await write_and_propose(fake_llm, harness, "# Plan\n\nUse Postgres (assumed).\n")
    await harness.session("plan").run_turn("plan the storage")
    first = results(harness)[0]
    assert first["name"] == "ask_user_question" and not first["is_error"]
    assert first["output"] == NO_USER


async def test_ask_user_question_reaches_the_user_through_the_callback(
    fake_llm: FakeLLM, harness: ContextHarness
) -> None:
    seen: list[Question] = []

    async def ask(questions: Sequence[Question]) -> Mapping[str, str] | None:
        seen.extend(questions)
        return {"Which database?": "SQLite", "Which parts?": "API, CLI"}

    questions = [
        {
            "question": "Which database?",
            "header": "Database",
            "multiSelect": False,
            "options": [
                {"label": "Postgres", "description": "server"},
                {"label": "SQLite", "description": "file"},
            ],
        },
        {
            "question": "Which parts?",
            "header": "Scope",
            "multiSelect": True,
            "options": [
                {"label": "API", "description": "a"},
                {"label": "CLI", "description": "b"},
                {"label": "UI", "description": "c"},
            ],
        },
    ]
    fake_llm.script(fakellm.tool_call("ask_user_question", {"questions": questions}))
    await write_and_propose(fake_llm, harness, "# Plan\n\nSQLite, API and CLI.\n")
    await harness.session("plan", ask_user=ask).run_turn("plan it")
    assert [q.header for q in seen] == ["Database", "Scope"] and seen[1].multi_select
    assert [o.label for o in seen[1].options] == ["API", "CLI", "UI"]
    output = str(results(harness)[0]["output"])
    assert "Q: Which database?\nA: SQLite" in output and "A: API, CLI" in output


async def test_too_many_questions_or_options_are_refused(
    fake_llm: FakeLLM, harness: ContextHarness
) -> None:
    one_option = {
        "question": "q?",
        "header": "h",
        "multiSelect": False,
        "options": [{"label": "only", "description": "d"}],
    }
    fake_llm.script(fakellm.tool_call("ask_user_question", {"questions": [one_option]}))
    await write_and_propose(fake_llm, harness, "# Plan\n")
    await harness.session("plan").run_turn("plan")
    first = results(harness)[0]
    assert first["is_error"] and "2 to 4 options" in str(first["output"])


async def test_the_required_tool_is_forced_when_the_turn_would_end_without_it(
    fake_llm: FakeLLM, harness: ContextHarness
) -> None:
    harness.plan_file.parent.mkdir(parents=True, exist_ok=True)
    harness.plan_file.write_text("# Plan\n\nAlready written.\n")
    fake_llm.script(
        fakellm.text("Here is what I would do."),  # forgets to propose
        fakellm.tool_call("propose_plan", {}),  # the forced step
        fakellm.text("Proposed."),
    )
    result = await harness.session("plan").run_turn("plan it")
    choices = [r.json.get("tool_choice") for r in fake_llm.requests]
    assert choices == [None, {"type": "tool", "name": "propose_plan"}, None]
    assert result.plan_proposed and result.reason == "completed"


async def test_switching_plan_and_exec_starts_a_new_segment_once_per_switch(
    fake_llm: FakeLLM, harness: ContextHarness
) -> None:
    session = harness.session("exec")
    fake_llm.script(fakellm.text("exec one"), fakellm.text("exec two"))
    await session.run_turn("one")
    await session.run_turn("two")
    session.set_mode("plan")
    await write_and_propose(fake_llm, harness, "# Plan\n")
    await session.run_turn("now plan")
    session.set_mode("exec")
    fake_llm.script(fakellm.text("back"))
    await session.run_turn("go")
    frames = SessionLog.open(harness.ws_id).frames
    breaks = prefix_breaks(frames)
    assert [(b["reason"], b["agent"]) for b in breaks] == [
        ("tool_set_changed", "plan"),
        ("tool_set_changed", "exec"),
    ]
    frozen = [f.data["reason"] for f in frames if f.type == ev.CONTEXT_FROZEN]
    assert frozen == ["start", "tool_set_changed", "tool_set_changed"]
    # The history survives the switch: the plan turn still sees the exec turns.
    assert "exec one" in texts_of(fake_llm.requests[2])


async def test_the_plan_agent_may_start_only_explore_sub_agents(
    fake_llm: FakeLLM, harness: ContextHarness
) -> None:
    repo = harness.repo
    plan_path = str(harness.plan_file)
    planner = [
        fakellm.tool_call("task", {"agentId": "exec", "title": "Doer", "prompt": "ROLE:doer"}),
        fakellm.tool_call(
            "task", {"agentId": "explore", "title": "Scout", "prompt": "ROLE:scout: find greet"}
        ),
        fakellm.tool_call("file_edit_insert", {"path": plan_path, "content": "# Plan\n"}),
        fakellm.tool_call("propose_plan", {}),
        fakellm.text("planned"),
    ]

    def respond(req: RecordedRequest) -> fakellm.Reply:
        first = req.json["messages"][0]["content"]
        text = first if isinstance(first, str) else first[-1].get("text", "")
        if "ROLE:scout" in text:
            return fakellm.text("greet is defined in app.py")
        step = sum(1 for m in req.json["messages"] if m["role"] == "assistant")
        return planner[min(step, len(planner) - 1)]

    fake_llm.set_responder(respond)
    client = open_client(harness.route.endpoint)
    manager = subagent_manager(settings=TaskSettings())
    info = WorkspaceInfo(harness.ws_id, harness.name, str(repo), str(repo), "local")
    context = workspace_context(repo, name=harness.name)
    host = manager.host_for(
        info, runtime=context.facts.runtime, route=harness.route, client=client, thinking="off"
    )
    session = engine_session(
        repo,
        harness.route,
        client,
        ws_id=harness.ws_id,
        name=harness.name,
        runtime=context.facts.runtime,
        settings=SessionSettings(thinking="off"),
        scratch_dir=repo.parent / "scratch",
        events=harness.events,
        subagents=host,
        context=context,
        agent=AgentSelection(agent_id="plan"),
    )
    try:
        result = await session.run_turn("ROLE:planner: plan the greeting change")
    finally:
        await session.aclose()
        await manager.aclose()
        await client.aclose()
    assert result.plan_proposed and result.text == "planned"
    refused, scouted = [r for r in results(harness) if r["name"] == "task"]
    assert refused["is_error"]
    assert "may only start explore sub-agents, not 'exec'" in str(refused["output"])
    assert not scouted["is_error"] and "greet is defined in app.py" in str(scouted["output"])
    children = [r for r in registry.list_workspaces() if r.parent_id == harness.ws_id]
    assert [r.agent for r in children] == ["explore"]
    task = description_of(fake_llm.requests[0], "task")
    assert "Agents you can start (agentId):\n- explore: Read-only" in task
    assert "- exec" not in task
