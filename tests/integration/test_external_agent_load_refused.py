"""An external agent that offers `session/load` but cannot load the workspace's session (Gemini
CLI 0.61 answers "Session not found" after a restart): the next `xum run --workspace` starts a
new agent session, says so in an advisory naming the agent's reason, and the turn completes."""

from __future__ import annotations

from pathlib import Path

from tests.support.external_agents import calls, configure, final, run_xum, write_script


def test_a_session_the_agent_cannot_load_is_replaced_by_a_new_one(
    repo: Path, tmp_path: Path
) -> None:
    log = tmp_path / "calls.ndjson"
    script = write_script(
        tmp_path / "s.json", [[{"message": "answered"}]], loadSession="fail", callLog=str(log)
    )
    configure(script)
    code, events, err = run_xum(repo, "--external-agent", "fake", "one")
    assert code == 0, err
    code, again, err = run_xum(repo, "--workspace", final(events)["workspace_id"], "two")
    assert code == 0, (err, again[-3:])
    methods = [c["method"] for c in calls(log)]
    assert methods.count("session/load") == 1 and methods.count("session/new") == 2
    (advisory,) = [e for e in again if e["type"] == "advisory"]
    assert advisory["kind"] == "external-agent-new-session"
    assert "cannot resume" in advisory["message"] and "Session not found" in advisory["message"]
    assert final(again)["reason"] == "completed"
