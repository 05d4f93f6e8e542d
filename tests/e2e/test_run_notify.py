"""The notify tool in a real `xum run`: offered with its `## Tool: notify` scoped instruction,
its call is a live `notification` event, and an agent whose tool policy removes it never sees
it (docs/notifications.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.e2e.cli import env_for, events, run_xum
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

SCOPED = "## Tool: notify\n\n- Notify on CI failures or deployment issues\n"
NO_NOTIFY_AGENT = """---
name: Exec
description: Carries out the request, never interrupting anyone
tools:
  add:
    - .*
  remove:
    - propose_plan
    - ask_user_question
    - notify
---
You are a quiet agent.
"""


def _tools(request_json: dict[str, Any]) -> dict[str, str]:
    return {t["name"]: t.get("description", "") for t in request_json.get("tools", [])}


def test_notify_is_offered_with_its_scoped_instruction_and_emits_an_event(
    fake_llm: FakeLLM, repo: Path
) -> None:
    (repo / "AGENTS.md").write_text("Be careful.\n\n" + SCOPED)
    fake_llm.script(
        fakellm.tool_call("notify", {"title": "CI failed", "message": "lint: 3 errors"}),
        fakellm.text("Told you."),
    )
    result = run_xum("run", "--json", "watch CI", cwd=repo, env=env_for(fake_llm))
    assert result.returncode == 0, result.stderr
    offered = _tools(fake_llm.requests[0].json)
    assert "notify" in offered
    assert "Notify on CI failures or deployment issues" in offered["notify"]
    assert "Notify on CI failures" not in offered["bash"]
    notices = [e for e in events(result.stdout) if e["type"] == "notification"]
    assert [(n["title"], n["message"]) for n in notices] == [("CI failed", "lint: 3 errors")]
    result_events = [e for e in events(result.stdout) if e["type"] == "tool-result"]
    assert result_events[0]["meta"]["notification"]["title"] == "CI failed"


def test_an_agent_whose_policy_removes_notify_is_not_offered_it(
    fake_llm: FakeLLM, repo: Path
) -> None:
    agents = repo / ".xum" / "agents"
    agents.mkdir(parents=True)
    (agents / "exec.md").write_text(NO_NOTIFY_AGENT)
    fake_llm.script(fakellm.text("Nothing to say."))
    result = run_xum("run", "--json", "work quietly", cwd=repo, env=env_for(fake_llm))
    assert result.returncode == 0, result.stderr
    offered = _tools(fake_llm.requests[0].json)
    assert "bash" in offered and "notify" not in offered


def test_text_mode_runs_through_a_notification(fake_llm: FakeLLM, repo: Path) -> None:
    fake_llm.script(
        fakellm.tool_call("notify", {"title": "Done", "message": None}),
        fakellm.text("Finished."),
    )
    result = run_xum("run", "finish", cwd=repo, env=env_for(fake_llm))
    assert result.returncode == 0, result.stderr
    assert "Finished." in result.stdout
