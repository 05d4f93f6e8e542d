"""`xum run --mode plan` and slash commands end to end: the real CLI in a subprocess, the fake
LLM server over HTTP, a real git repository."""

from __future__ import annotations

import os
import re
from pathlib import Path

from tests.contextkit import write
from tests.e2e.cli import env_for, events, run_xum
from tests.gitrepo import make_repo
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.fakellm.record import RecordedRequest

MODEL = "anthropic:claude-sonnet-5-5"


def tool_results(request: RecordedRequest) -> int:
    return sum(
        1
        for message in request.json["messages"]
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    )


def planner(request: RecordedRequest) -> fakellm.Reply:
    """A model that reads the code, tries to edit it (refused), writes the plan, proposes it."""
    system = request.json["system"][0]["text"]
    plan_file = re.search(r"Plan file: (\S+)", system)
    assert plan_file is not None, "the plan-mode section names the plan file"
    done = tool_results(request)
    if done == 0:
        return fakellm.tool_call("file_read", {"path": "app.py"})
    if done == 1:
        return fakellm.tool_call(
            "file_edit_replace_string",
            {"path": "app.py", "old_string": "'hi'", "new_string": "'hello'"},
        )
    if done == 2:
        return fakellm.tool_call(
            "file_edit_insert",
            {"path": plan_file.group(1), "content": "# Plan\n\n1. Return 'hello' from greet().\n"},
        )
    if done == 3:
        return fakellm.tool_call("propose_plan", {})
    return fakellm.text("The plan is ready for review.")


def test_run_in_plan_mode_writes_and_proposes_a_plan(fake_llm: FakeLLM, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    fake_llm.set_responder(planner)
    result = run_xum(
        "run",
        "--json",
        "--mode",
        "plan",
        "-m",
        MODEL,
        "Plan: make greet say hello",
        cwd=repo,
        env=env_for(fake_llm),
    )
    assert result.returncode == 0, result.stderr
    evts = events(result.stdout)
    final = evts[-1]
    assert final["type"] == "final" and final["exit_code"] == 0
    assert final["agent"] == "plan" and final["plan_proposed"] is True
    plan = Path(final["plan_path"])
    assert plan.is_file() and plan.read_text() == "# Plan\n\n1. Return 'hello' from greet().\n"
    root = Path(os.environ["XUM_ROOT"])
    assert plan == root / "plans" / "repo" / f"{final['workspace_name']}.md"
    assert (repo / "app.py").read_text() == "def greet():\n    return 'hi'\n"  # refused
    refused = [e for e in evts if e["type"] == "tool-result" and e["is_error"]]
    assert len(refused) == 1 and "plan file" in refused[0]["output"]
    assert not any(e["type"] == "advisory" and "limited" in e.get("kind", "") for e in evts)
    assert any(e["type"] == "plan-proposed" for e in evts)
    frozen = next(e for e in evts if e["type"] == "context-frozen")
    assert frozen["mode"] == "plan" and "propose_plan" in frozen["tools"]


def test_text_mode_prints_the_plan_path(fake_llm: FakeLLM, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    fake_llm.set_responder(planner)
    result = run_xum(
        "run", "--mode", "plan", "-m", MODEL, "plan it", cwd=repo, env=env_for(fake_llm)
    )
    assert result.returncode == 0, result.stderr
    assert re.search(r"^plan: .*/plans/repo/.*\.md$", result.stderr, re.MULTILINE)


def test_a_skill_runs_from_a_slash_command(fake_llm: FakeLLM, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    write(
        repo / ".xum/skills/fix-issue/SKILL.md",
        "---\nname: fix-issue\ndescription: Fix a tracked issue\n---\n"
        "Fix issue #$1 (priority: $2). Full request: $ARGUMENTS.\n",
    )
    fake_llm.script(fakellm.text("On it."))
    result = run_xum(
        "run", "--json", "-m", MODEL, "/fix-issue 42 high", cwd=repo, env=env_for(fake_llm)
    )
    assert result.returncode == 0, result.stderr
    sent = fake_llm.requests[0].json["messages"][-1]["content"][-1]["text"]
    assert "Fix issue #42 (priority: high). Full request: 42 high." in sent
    assert sent.endswith("Using skill fix-issue.")
    user = next(e for e in events(result.stdout) if e["type"] == "user-message")
    assert user["typed"] == "/fix-issue 42 high"
    assert user["slash"] == {"kind": "skill", "name": "fix-issue", "arguments": "42 high"}


def test_a_one_shot_override_picks_the_model_and_thinking(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    fake_llm.script(fakellm.text("Done with haiku."))
    result = run_xum(
        "run", "--json", "-m", "sonnet", "/haiku+off say hi", cwd=repo, env=env_for(fake_llm)
    )
    assert result.returncode == 0, result.stderr
    request = fake_llm.requests[0].json
    assert request["model"] == "claude-haiku-5-5"
    assert request.get("thinking", {"type": "disabled"}) == {"type": "disabled"}
    assert request["messages"][-1]["content"][-1]["text"] == "say hi"
    final = events(result.stdout)[-1]
    assert final["model"] == "anthropic:claude-haiku-5-5"


def test_a_bad_override_fails_before_anything_runs(fake_llm: FakeLLM, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    result = run_xum("run", "--json", "-m", MODEL, "/sonnet+", cwd=repo, env=env_for(fake_llm))
    assert result.returncode == 1
    assert events(result.stdout)[-1]["type"] == "error"
    assert not fake_llm.requests


def test_the_agents_ai_defaults_apply_when_no_flag_is_given(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    write(
        repo / ".xum/agents/exec.md",
        "---\nname: Exec\nbase: exec\nai:\n  model: haiku\n  thinkingLevel: off\n---\nBe brief.\n",
    )
    fake_llm.script(fakellm.text("short"), fakellm.text("long"))
    result = run_xum("run", "--json", "say hi", cwd=repo, env=env_for(fake_llm))
    assert result.returncode == 0, result.stderr
    assert fake_llm.requests[0].json["model"] == "claude-haiku-5-5"
    assert fake_llm.requests[0].json.get("thinking", {"type": "disabled"}) == {"type": "disabled"}
    flagged = run_xum("run", "--json", "-m", MODEL, "say hi", cwd=repo, env=env_for(fake_llm))
    assert flagged.returncode == 0, flagged.stderr
    assert fake_llm.requests[1].json["model"] == "claude-sonnet-5-5"  # the flag wins
