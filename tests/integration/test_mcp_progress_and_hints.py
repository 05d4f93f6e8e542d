"""MCP calls in a workspace session: a long call's progress is live output, and the tools'
annotations are kept, with `readOnlyHint` deciding what the `read-only` and `ask` permission
modes let run. Real server processes (tests/mcp/hinted_server.py), the fake LLM, real session
logs; the progress test orders itself with a barrier file the server waits for."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.gitrepo import make_repo
from tests.mcp.sessions import open_session
from tests.mcp.support import write_config
from xum.engine import events as E
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.workspaces import lifecycle
from xum.workspaces.safety.approvals import ApprovalAnswer, Decision, list_rules
from xum.workspaces.safety.choice import SafetyChoice

HINTED = Path(__file__).parents[1] / "mcp" / "hinted_server.py"
Event = dict[str, Any]


def hinted_config(xum_root: Path, barriers: Path) -> None:
    entry = {"command": f"{sys.executable} {HINTED}", "env": {"MCP_TEST_DIR": str(barriers)}}
    write_config(xum_root / "mcp.jsonc", {"h": entry}, toolSearch=False)


async def until(check: Callable[[], bool], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


def results(events: list[Event]) -> list[Event]:
    return [e for e in events if e["type"] == "tool-result"]


async def new_workspace(tmp_path: Path, hint: str) -> lifecycle.CreatedWorkspace:
    repo = make_repo(tmp_path / "repo")
    return await lifecycle.create_workspace(repo, "local", name_hint=hint, run_init=False)


async def test_a_long_calls_progress_is_live_output_before_its_result(
    fake_llm: FakeLLM, xum_root: Path, tmp_path: Path
) -> None:
    barriers = tmp_path / "barriers"
    barriers.mkdir()
    hinted_config(xum_root, barriers)
    created = await new_workspace(tmp_path, "progress")
    events: list[Event] = []
    async with open_session(created.record, fake_llm, events, created=created) as session:
        fake_llm.script(fakellm.tool_call("mcp__h__steps", {"count": 3}), fakellm.text("done"))
        turn = asyncio.create_task(session.agent.run_turn("go"))

        def progress() -> str:
            return "".join(
                e["text"]
                for e in events
                if e["type"] == "tool-output" and e["stream"] == "progress"
            )

        # The server holds the call after its first report until it sees `go`: the report
        # is on the event stream while the call still runs.
        await until(lambda: "[1/3] step 1 of 3" in progress(), "the first progress report")
        assert not results(events)
        (barriers / "go").write_text("")
        await turn
    assert progress().splitlines() == [
        "[1/3] step 1 of 3",
        "[2/3] step 2 of 3",
        "[3/3] step 3 of 3",
    ]
    (result,) = results(events)
    assert result["output"] == "finished" and not result["is_error"]
    last_progress = max(
        i for i, e in enumerate(events) if e["type"] == "tool-output" and e["stream"] == "progress"
    )
    assert last_progress < events.index(result)


async def test_read_only_mode_runs_only_tools_their_server_marks_read_only(
    fake_llm: FakeLLM, xum_root: Path, tmp_path: Path
) -> None:
    barriers = tmp_path / "barriers"
    barriers.mkdir()
    hinted_config(xum_root, barriers)
    created = await new_workspace(tmp_path, "readonly")
    events: list[Event] = []
    safety = SafetyChoice(permissions="read-only")
    async with open_session(
        created.record, fake_llm, events, created=created, safety=safety
    ) as session:
        fake_llm.script(
            fakellm.tool_call("mcp__h__lookup", {"key": "a"}),
            fakellm.tool_call("mcp__h__mutate", {"key": "a"}),
            fakellm.text("done"),
        )
        await session.agent.run_turn("look, then change")
    lookup, mutate = results(events)
    assert lookup["output"] == "value of a" and not lookup["is_error"]
    # The server's annotations are kept with the result, under their wire names.
    assert lookup["meta"]["mcp_annotations"] == {"title": "Look up", "readOnlyHint": True}
    assert mutate["is_error"] and "read-only permission mode" in mutate["output"]
    assert mutate["meta"]["approval"]["kind"] == "read-only"
    assert not (barriers / "mutated-a").exists(), "read-only mode ran an unmarked MCP tool"
    assert not [e for e in events if e["type"] == "approval-request"]


async def test_ask_mode_asks_for_unmarked_tools_and_can_always_allow_one(
    fake_llm: FakeLLM, xum_root: Path, tmp_path: Path
) -> None:
    barriers = tmp_path / "barriers"
    barriers.mkdir()
    hinted_config(xum_root, barriers)
    created = await new_workspace(tmp_path, "ask")
    events: list[Event] = []
    answers: list[Decision] = ["once", "deny", "always"]
    asked: list[E.ApprovalRequest] = []

    async def approver(request: E.ApprovalRequest) -> ApprovalAnswer:
        asked.append(request)
        return ApprovalAnswer(answers.pop(0))

    safety = SafetyChoice(permissions="ask")
    async with open_session(
        created.record, fake_llm, events, created=created, safety=safety, approver=approver
    ) as session:
        fake_llm.script(
            fakellm.tool_call("mcp__h__lookup", {"key": "a"}),  # marked read-only: not asked
            fakellm.tool_call("mcp__h__mutate", {"key": "once"}),
            fakellm.tool_call("mcp__h__mutate", {"key": "denied"}),
            fakellm.tool_call("mcp__h__mutate", {"key": "always"}),
            fakellm.tool_call("mcp__h__mutate", {"key": "later"}),  # remembered: not asked
            fakellm.text("done"),
        )
        await session.agent.run_turn("change things")
    assert [r.tool for r in asked] == ["mcp__h__mutate"] * 3
    assert {(r.kind, r.prefix) for r in asked} == {("mcp", "mcp__h__mutate")}
    assert [json.loads(r.subject) for r in asked] == [
        {"key": k} for k in ("once", "denied", "always")
    ]
    outcomes = [(r["is_error"], r["output"]) for r in results(events)]
    assert outcomes[0] == (False, "value of a")
    assert outcomes[1] == (False, "mutated")
    assert outcomes[2][0] and "the user denied it" in outcomes[2][1]
    assert outcomes[3:] == [(False, "mutated"), (False, "mutated")]
    made = sorted(p.name for p in barriers.glob("mutated-*"))
    assert made == ["mutated-always", "mutated-later", "mutated-once"]
    rules = [r for r in list_rules() if r.get("tool") == "mcp__h__mutate"]
    assert len(rules) == 1 and rules[0]["prefix"] == "mcp__h__mutate"
