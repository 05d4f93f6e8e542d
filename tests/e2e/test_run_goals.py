"""Goal runs end to end: `xum run --goal` and a plain run whose agent sets a goal, against the
fake LLM server, with the exit code and the JSON events of each way a goal run can end."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path
from typing import Any

from tests.e2e.cli import XUM, env_for, events, run_xum
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.fakellm.record import RecordedRequest


def of(evts: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in evts if e["type"] == kind]


def last_text(request: RecordedRequest) -> str:
    content = request.json["messages"][-1]["content"]
    texts = [b["text"] for b in content if b.get("type") == "text"]
    return texts[-1] if texts else ""


def goal_run(server: FakeLLM, repo: Path, *args: str) -> tuple[int, list[dict[str, Any]], str]:
    proc = run_xum("run", "--json", *args, cwd=repo, env=env_for(server))
    return proc.returncode, events(proc.stdout), proc.stderr


def complete(summary: str = "The tests pass now.") -> fakellm.Reply:
    return fakellm.tool_call("complete_goal", {"summary": summary})


def test_a_goal_run_continues_until_the_agent_completes_the_goal(
    fake_llm: FakeLLM, repo: Path
) -> None:
    fake_llm.script(
        fakellm.text("Started: found the failing test."),  # the kickoff turn
        complete(),  # the first continuation completes it
        fakellm.text("Done."),
    )
    code, evts, stderr = goal_run(
        fake_llm, repo, "--goal", "make the tests pass", "--goal-turns", "5"
    )
    assert code == 0, stderr
    # The goal text was the kickoff message; the continuation names the objective.
    assert last_text(fake_llm.requests[0]) == "make the tests pass"
    assert "make the tests pass" in last_text(fake_llm.requests[1])
    assert "complete_goal" in last_text(fake_llm.requests[1])
    continuing, completed = of(evts, "goal-continuing"), of(evts, "goal-completed")
    assert [c["turn"] for c in continuing] == [1] and continuing[0]["turnCap"] == 5
    assert completed[0]["summary"] == "The tests pass now." and completed[0]["turns"] == 1
    final = evts[-1]
    assert final["type"] == "final" and final["reason"] == "completed"
    assert final["goal"]["status"] == "complete" and final["goal"]["source"] == "cli"
    assert "limit" not in final
    # The goal and the continuation are on record: a replay shows them.
    assert of(evts, "goal")[0]["goal"]["objective"] == "make the tests pass"
    rows = [e for e in of(evts, "user-message") if e.get("synthetic")]
    assert [r["kind"] for r in rows] == ["goal_continuation"]


def test_the_turn_cap_stops_an_incomplete_goal_with_exit_3(fake_llm: FakeLLM, repo: Path) -> None:
    fake_llm.set_default(fakellm.text("Still working on it."))
    code, evts, stderr = goal_run(
        fake_llm, repo, "--goal", "refactor the module", "--goal-turns", "2", "start with a plan"
    )
    assert code == 3, stderr
    assert last_text(fake_llm.requests[0]) == "start with a plan"  # the kickoff message
    assert len(fake_llm.requests) == 3  # the kickoff and two continuations
    incomplete = of(evts, "goal-incomplete")[0]
    assert incomplete["reason"] == "goal_turns" and incomplete["turns"] == 2
    final = evts[-1]
    assert final["reason"] == "goal_turns" and final["exit_code"] == 3
    assert final["limit"] == {"kind": "goal_turns", "turn_cap": 2}
    assert final["goal"]["status"] == "incomplete"
    # In text mode the output says which limit stopped it.
    fake_llm.set_default(fakellm.text("Still working on it."))
    proc = run_xum("run", "--goal", "again", "--goal-turns", "1", cwd=repo, env=env_for(fake_llm))
    assert proc.returncode == 3
    assert "continuation turns are used; the goal is incomplete" in proc.stderr


def test_the_goal_budget_allows_one_wrap_up_turn_then_exits_3(
    fake_llm: FakeLLM, repo: Path
) -> None:
    pricey = fakellm.Usage(input_tokens=100_000, output_tokens=1000)  # ~$0.32 a turn on sonnet
    fake_llm.set_default(fakellm.text("Working.", usage=pricey))
    code, evts, stderr = goal_run(fake_llm, repo, "--goal", "ship it", "--goal-budget", "50c")
    assert code == 3, stderr
    continuing = of(evts, "goal-continuing")
    assert continuing[-1]["wrapUp"] is True and continuing[-1]["budgetCents"] == 50
    assert "budget is spent" in last_text(fake_llm.requests[-1])
    final = evts[-1]
    assert final["reason"] == "goal_budget"
    assert final["limit"] == {"kind": "goal_budget", "budget_cents": 50}
    assert of(evts, "goal-incomplete")[0]["reason"] == "goal_budget"
    assert final["goal"]["spentCents"] >= 50


def test_the_session_budget_is_a_hard_stop_with_exit_2(fake_llm: FakeLLM, repo: Path) -> None:
    big = fakellm.Usage(input_tokens=400_000, output_tokens=1000)
    fake_llm.set_default(fakellm.text("Working.", usage=big))
    code, evts, stderr = goal_run(
        fake_llm, repo, "--goal", "ship it", "--goal-budget", "$100", "--budget", "2.00"
    )
    assert code == 2, stderr
    final = evts[-1]
    assert final["limit"] == {"kind": "session_budget", "budget_usd": 2.0}
    assert of(evts, "goal-incomplete")[0]["reason"] == "session_budget"


def test_an_error_ends_a_goal_run_with_exit_1(fake_llm: FakeLLM, repo: Path) -> None:
    fake_llm.script(fakellm.text("Started."), fakellm.error(400))
    code, evts, _ = goal_run(fake_llm, repo, "--goal", "ship it", "--goal-turns", "3")
    assert code == 1
    assert of(evts, "goal-incomplete")[0]["reason"] == "error"
    assert evts[-1]["type"] == "final" and "error" in evts[-1]


def test_a_plain_run_adopts_the_goal_its_agent_sets(fake_llm: FakeLLM, repo: Path) -> None:
    fake_llm.script(
        fakellm.tool_call("set_goal", {"objective": "migrate the schema", "turnCap": 3}),
        fakellm.text("Goal set; starting."),
        complete("Migrated and verified."),
        fakellm.text("All done."),
    )
    code, evts, stderr = goal_run(fake_llm, repo, "migrate the schema, however long it takes")
    assert code == 0, stderr
    adopted = of(evts, "goal-adopted")[0]
    assert adopted["objective"] == "migrate the schema" and adopted["turnCap"] == 3
    assert adopted["status"] == "active" and adopted["budgetCents"] is None
    assert of(evts, "goal-completed")[0]["summary"] == "Migrated and verified."
    assert evts[-1]["goal"]["source"] == "agent"


def test_a_plain_run_whose_agent_sets_no_goal_is_one_request(fake_llm: FakeLLM, repo: Path) -> None:
    fake_llm.script(fakellm.text("Answer."))
    code, evts, _ = goal_run(fake_llm, repo, "just answer")
    assert code == 0 and len(fake_llm.requests) == 1
    assert not [e for e in evts if e["type"].startswith("goal")]
    tools = [t["name"] for t in fake_llm.requests[0].json["tools"]]
    assert {"set_goal", "get_goal", "complete_goal"} <= set(tools)


def test_the_goal_tools_refuse_what_they_cannot_do(fake_llm: FakeLLM, repo: Path) -> None:
    fake_llm.script(
        fakellm.tool_call("complete_goal", {"summary": "nothing"}),  # no goal yet
        fakellm.tool_call("set_goal", {"objective": "unbounded"}),  # neither cap
        fakellm.tool_call("set_goal", {"objective": "first", "turnCap": 1}),
        fakellm.tool_call("set_goal", {"objective": "second", "turnCap": 1}),  # one is running
        fakellm.tool_call("get_goal", {}),
        fakellm.tool_call("complete_goal", {"summary": "done", "goalId": "goal-wrong"}),
        fakellm.text("Stopping here."),
        fakellm.text("Continuation."),
    )
    code, evts, _ = goal_run(fake_llm, repo, "try the goal tools")
    results = of(evts, "tool-result")
    assert [r["is_error"] for r in results] == [True, True, False, True, False, True]
    assert "no running goal" in results[0]["output"]
    assert "budgetCents, turnCap or both" in results[1]["output"]
    assert "already running" in results[3]["output"]
    shown = json.loads(results[4]["output"])
    assert shown["objective"] == "first" and shown["turnCap"] == 1 and shown["turnsUsed"] == 0
    assert "goal_conflict" in results[5]["output"]
    assert code == 3  # the adopted goal ran its one continuation and stayed incomplete


def test_goal_flags_are_checked_before_anything_runs(
    fake_llm: FakeLLM, repo: Path, xum_root: Path
) -> None:
    for args in (
        ["--goal-turns", "3", "hi"],
        ["--goal", "x", "--goal-budget", "lots"],
        ["--goal", "x", "--mode", "plan"],
        ["--goal", "x", "--goal-turns", "0"],
    ):
        code, evts, _ = goal_run(fake_llm, repo, *args)
        assert code == 1, args
        assert evts[-1]["type"] == "error", args
    assert fake_llm.requests == []
    assert not (xum_root / "sessions").exists()


def test_ctrl_c_stops_a_goal_run_with_exit_130(fake_llm: FakeLLM, repo: Path) -> None:
    fake_llm.script(fakellm.text("Started."), fakellm.text("slow " * 400, chunk_size=5, delay=0.02))
    proc = subprocess.Popen(
        [XUM, "run", "--json", "--goal", "long task", "--goal-turns", "9"],
        cwd=repo,
        env={**__import__("os").environ, **env_for(fake_llm)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        for line in proc.stdout:  # the continuation is streaming: interrupt it
            if json.loads(line)["type"] == "goal-continuing":
                break
        fake_llm.wait_for_requests(2)
        proc.send_signal(signal.SIGINT)
        rest, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    evts = events(rest)
    assert of(evts, "goal-incomplete")[0]["reason"] == "interrupted"
    assert evts[-1]["reason"] == "interrupted"
