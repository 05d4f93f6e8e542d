"""`xum run --external-agent`: an external ACP agent (the scripted fake, a real subprocess) as a
workspace's agent, through the real CLI, a temp $XUM_ROOT and a real git checkout. What it
reports is recorded in the workspace's log with xum's own events (live `--json` and the replay
are the same), its requests are answered by xum's permission modes, fences and sandbox, and
whatever way it fails the turn ends with the reason and the log stays usable."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.external_agents import (
    calls,
    committed,
    configure,
    final,
    replay,
    run_xum,
    texts,
    write_script,
)

EDIT = [
    {"thought": "look first"},
    {"message": "Editing "},
    {"message": "app.py"},
    {
        "toolCall": {
            "id": "c1",
            "title": "Edit app.py",
            "kind": "edit",
            "rawInput": {"path": "app.py"},
        }
    },
    {
        "toolUpdate": {
            "id": "c1",
            "status": "completed",
            "diff": {"path": "app.py", "old": "x = 1\n", "new": "x = 2\n"},
        }
    },
    {"toolCall": {"id": "c2", "title": "ls", "kind": "execute", "rawInput": {"cmd": "ls"}}},
    {"toolUpdate": {"id": "c2", "status": "failed", "rawOutput": {"output": "ls: nope"}}},
    {"plan": [{"content": "Edit app.py", "status": "completed"}]},
    {"usage": {"cost": 0.25}},
    {"message": "All done."},
]


def test_a_turn_is_recorded_and_replays_as_it_streamed(repo: Path, tmp_path: Path) -> None:
    configure(write_script(tmp_path / "s.json", [EDIT]))
    code, events, err = run_xum(repo, "--external-agent", "fake", "change x")
    assert code == 0, err
    types = [e["type"] for e in events]
    assert types[:2] == ["turn-start", "user-message"]
    assert "text-delta" in types and "reasoning-delta" in types
    first = next(e for e in events if e["type"] == "assistant-message")
    assert first["text"] == "Editing app.py" and first["reasoning"] == "look first"
    assert first["tool_calls"][0]["name"] == "Edit app.py"
    assert json.loads(first["tool_calls"][0]["arguments"]) == {"path": "app.py"}
    results = {e["call_id"]: e for e in events if e["type"] == "tool-result"}
    assert "-x = 1\n+x = 2" in results["c1"]["output"] and not results["c1"]["is_error"]
    assert results["c2"]["is_error"] and results["c2"]["output"] == "ls: nope"
    plan = next(e for e in results.values() if e["name"] == "todo_write")
    assert plan["output"] == "[x] Edit app.py"
    end = next(e for e in events if e["type"] == "turn-end")
    assert end["reason"] == "completed" and end["cost_usd"] == 0.25
    assert final(events)["text"] == "All done."
    # The replay of the log is exactly what was committed live.
    assert replay(repo, final(events)["workspace_id"]) == committed(events)


def test_without_a_reported_cost_the_cost_is_unknown(repo: Path, tmp_path: Path) -> None:
    configure(write_script(tmp_path / "s.json", [[{"message": "hi"}]]))
    code, events, err = run_xum(repo, "--external-agent", "fake", "hello")
    assert code == 0, err
    end = next(e for e in events if e["type"] == "turn-end")
    assert end.get("cost_usd") is None


@pytest.mark.parametrize(
    ("flags", "kind", "chosen"),
    [
        ([], "edit", "allow-once"),  # auto: allowed
        (["--permissions", "read-only"], "edit", "reject-once"),
        (["--permissions", "read-only"], "read", "allow-once"),
        (["--permissions", "ask", "--approval", "deny"], "execute", "reject-once"),
        (["--permissions", "ask", "--approval", "never"], "execute", "allow-once"),
    ],
)
def test_permission_requests_follow_the_permission_mode(
    repo: Path, tmp_path: Path, flags: list[str], kind: str, chosen: str
) -> None:
    ask = {"permission": {"id": "p1", "title": "do it", "kind": kind}}
    configure(write_script(tmp_path / "s.json", [[ask]]))
    code, events, err = run_xum(repo, *flags, "--external-agent", "fake", "go")
    assert code == 0, err
    assert texts(events) == [f"permission: {chosen}"]


def test_files_are_served_inside_the_checkout_only(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    steps = [
        {"read": "app.py"},
        {"write": {"path": str(repo / "new.txt"), "content": "made\n"}},
        {"write": {"path": str(outside), "content": "escaped\n"}},
        {"read": str(Path.home() / ".xum" / "config.json")},
    ]
    configure(write_script(tmp_path / "s.json", [steps]))
    code, events, err = run_xum(repo, "--external-agent", "fake", "files")
    assert code == 0, err
    said = "".join(texts(events))
    assert "def greet" in said
    assert (repo / "new.txt").read_text() == "made\n"
    assert not outside.exists()
    assert "is outside the workspace" in said  # the write outside the checkout
    assert "cannot read or change it" in said  # xum's own files


def test_read_only_mode_refuses_writes(repo: Path, tmp_path: Path) -> None:
    steps = [{"write": {"path": "new.txt", "content": "made\n"}}]
    configure(write_script(tmp_path / "s.json", [steps]))
    code, events, err = run_xum(repo, "--permissions", "read-only", "--external-agent", "fake", "w")
    assert code == 0, err
    assert "read-only" in "".join(texts(events))
    assert not (repo / "new.txt").exists()


def test_a_terminal_command_runs_in_the_sandbox(repo: Path, tmp_path: Path) -> None:
    target = Path(os.environ["XUM_ROOT"]) / "escaped.txt"  # writable, but not in the sandbox
    script = f"echo inside > made.txt; echo out > {target} || echo blocked; echo done"
    steps = [{"terminal": {"command": "sh", "args": ["-c", script], "id": "t1"}}]
    configure(write_script(tmp_path / "s.json", [steps]))
    code, events, err = run_xum(
        repo, "--sandbox", "workspace-write", "--external-agent", "fake", "run"
    )
    assert code == 0, err
    said = "".join(texts(events))
    assert said.startswith("exit 0:") and "blocked" in said and "done" in said
    assert (repo / "made.txt").read_text() == "inside\n"
    assert not target.exists()
    result = next(e for e in events if e["type"] == "tool-result" and e["call_id"] == "t1")
    assert "done" in result["output"]


def test_xums_keys_do_not_reach_the_agent(repo: Path, tmp_path: Path) -> None:
    dump = tmp_path / "env.json"
    leak = [
        {"toolCall": {"id": "c1", "title": "env", "kind": "execute"}},
        {"toolUpdate": {"id": "c1", "text": "ANTHROPIC_API_KEY=sk-ant-secret-value"}},
    ]
    configure(
        write_script(tmp_path / "s.json", [leak], envDump=str(dump)),
        env={"XUM_FAKE_ACP_SCRIPT": str(tmp_path / "s.json"), "AGENT_OWN": "kept"},
    )
    code, events, err = run_xum(
        repo,
        "--external-agent",
        "fake",
        "hi",
        env={"ANTHROPIC_API_KEY": "sk-ant-secret-value", "OPENAI_API_KEY": "sk-openai"},
    )
    assert code == 0, err
    env = json.loads(dump.read_text())
    assert "ANTHROPIC_API_KEY" not in env and "OPENAI_API_KEY" not in env
    assert "sk-ant-secret-value" not in dump.read_text()
    assert env["AGENT_OWN"] == "kept"
    # What the agent reports is masked like xum's own tool output.
    (result,) = [e for e in events if e["type"] == "tool-result"]
    assert "sk-ant-secret-value" not in result["output"] and "[secret:" in result["output"]


def test_a_restart_resumes_the_session_with_session_load(repo: Path, tmp_path: Path) -> None:
    log = tmp_path / "calls.ndjson"
    script = write_script(
        tmp_path / "s.json",
        [[{"message": "first"}]],
        loadSession=True,
        callLog=str(log),
    )
    configure(script)
    code, events, err = run_xum(repo, "--external-agent", "fake", "one")
    assert code == 0, err
    workspace = final(events)["workspace_id"]
    code, again, err = run_xum(repo, "--workspace", workspace, "two")
    assert code == 0, err
    methods = [(c["method"], c.get("sessionId")) for c in calls(log)]
    (created,) = [sid for m, sid in methods if m == "session/new"]
    assert ("session/load", created) in methods
    prompts = [sid for m, sid in methods if m == "session/prompt"]
    assert prompts == [created, created]
    # The history the agent replays on load is not recorded again.
    assert "(replayed)" not in json.dumps(again)
    assert len([e for e in replay(repo, workspace) if e["type"] == "turn-end"]) == 2


def test_an_agent_without_load_starts_a_new_session(repo: Path, tmp_path: Path) -> None:
    log = tmp_path / "calls.ndjson"
    configure(write_script(tmp_path / "s.json", [[{"message": "x"}]], callLog=str(log)))
    code, events, err = run_xum(repo, "--external-agent", "fake", "one")
    assert code == 0, err
    code, again, err = run_xum(repo, "--workspace", final(events)["workspace_id"], "two")
    assert code == 0, err
    assert [c["method"] for c in calls(log)].count("session/new") == 2
    assert any(e["type"] == "advisory" for e in again)


@pytest.mark.parametrize(
    ("steps", "words"),
    [
        (
            [
                {"message": "working"},
                {"toolCall": {"id": "c1", "title": "t", "kind": "edit"}},
                {"crash": 3},
            ],
            "exited (status 3)",
        ),
        ([{"message": "x"}, {"malformed": True}], "broke the protocol"),
    ],
)
def test_a_broken_agent_ends_the_turn_with_the_reason(
    repo: Path, tmp_path: Path, steps: list[dict[str, object]], words: str
) -> None:
    script = write_script(tmp_path / "s.json", [steps])
    configure(script)
    code, events, _err = run_xum(repo, "--external-agent", "fake", "go")
    assert code == 1
    end = next(e for e in events if e["type"] == "turn-end")
    assert end["reason"] == "error" and words in end["error"]["message"]
    workspace = final(events)["workspace_id"]
    # The log is valid: every call has a result, and the next turn runs (the agent restarts).
    write_script(script, [[{"message": "fine again"}]])
    code, again, err = run_xum(repo, "--workspace", workspace, "again")
    assert code == 0, err
    assert texts(again) == ["fine again"]
    replayed = replay(repo, workspace)
    calls_made = {c["id"] for e in replayed for c in e.get("tool_calls") or []}
    answered = {e["call_id"] for e in replayed if e["type"] == "tool-result"}
    assert calls_made == answered


def test_a_missing_command_is_a_clear_error(repo: Path, tmp_path: Path) -> None:
    configure(tmp_path / "none.json", command=str(tmp_path / "no-such-agent"))
    code, events, _err = run_xum(repo, "--external-agent", "fake", "go")
    assert code == 1
    end = next(e for e in events if e["type"] == "turn-end")
    assert "was not found" in end["error"]["message"]
    assert "externalAgents.fake" in end["error"]["hint"]


def test_an_unknown_name_lists_the_configured_ones(repo: Path, tmp_path: Path) -> None:
    configure(tmp_path / "s.json", name="opencode")
    code, events, _err = run_xum(repo, "--external-agent", "claude", "go")
    assert code != 0
    error = events[-1]
    assert error["type"] == "error"
    assert "opencode" in error["message"] and "docs/external-agents.md" in error["hint"]
    assert not any(e["type"] == "turn-start" for e in events)


def test_engine_only_flags_are_refused(repo: Path, tmp_path: Path) -> None:
    configure(write_script(tmp_path / "s.json", [[{"message": "x"}]]))
    code, events, _err = run_xum(
        repo, "--external-agent", "fake", "--model", "sonnet", "--goal", "g", "go"
    )
    assert code != 0
    message = events[-1]["message"]
    assert "--model" in message and "--goal" in message
