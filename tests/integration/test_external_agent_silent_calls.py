"""Tool calls as Gemini CLI reports them: never announced with `tool_call` (only in a permission
request), first seen in a `tool_call_update` that completes them, and a shell call with neither
content nor `rawOutput`. xum records the call from that update and a result that says the agent
reported no output, so the log stays valid and the user sees what happened."""

from __future__ import annotations

from pathlib import Path

from tests.support.external_agents import committed, configure, final, replay, run_xum, write_script
from xum.workspaces.external.recording import NO_OUTPUT


def test_a_call_first_seen_completed_is_recorded_with_its_result(
    repo: Path, tmp_path: Path
) -> None:
    steps = [
        {"toolUpdate": {"id": "g1", "title": "printf marker", "kind": "execute"}},
        {"toolUpdate": {"id": "g2", "title": "notes.txt: a => b", "kind": "edit", "text": "ok"}},
        {"message": "done"},
    ]
    configure(write_script(tmp_path / "s.json", [steps]))
    code, events, err = run_xum(repo, "--permissions", "auto", "--external-agent", "fake", "go")
    assert code == 0, err
    calls = [(e["call_id"], e["name"]) for e in events if e["type"] == "tool-call"]
    assert calls == [("g1", "printf marker"), ("g2", "notes.txt: a => b")]
    results = {e["call_id"]: e["output"] for e in events if e["type"] == "tool-result"}
    assert results == {"g1": NO_OUTPUT, "g2": "ok"}
    assert replay(repo, final(events)["workspace_id"]) == committed(events)
