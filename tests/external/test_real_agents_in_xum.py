"""Real third-party agents as a workspace's agent: `xum run --external-agent` starts opencode,
Claude Code (claude-code-acp), Codex (codex-acp) or Gemini CLI (`gemini --acp`) in the workspace's checkout and drives it over ACP, each pointed at
the fake LLM on loopback. A turn whose model reply runs the agent's shell tool and edits a file:
the command's output reaches the model, the file changes in the checkout, the turn is recorded in
xum's log with xum's own events and replays as it streamed; a second `xum run --workspace`
continues the same workspace with the same agent.

The agents are installed by `make external-agents`; without them these tests skip, unless CI is
set (`make test` installs them)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.external_agents import committed, final, replay, run_xum, texts
from xum.store.config import update_config
from xum.testing import external_agents as agents
from xum.testing import fakellm
from xum.workspaces.external.recording import NO_OUTPUT

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

NOTES = "alpha\n"
RUN_TIMEOUT_S = 120


def _opencode_turn(notes: Path) -> list[fakellm.Reply]:
    return [
        fakellm.tool_call("bash", {"command": "echo marker-$((6 * 7))", "description": "Run it"}),
        fakellm.tool_call("read", {"filePath": str(notes)}),  # it edits only what it has read
        fakellm.tool_call(
            "edit", {"filePath": str(notes), "oldString": "alpha", "newString": "beta"}
        ),
        fakellm.reply("Printed and edited."),
    ]


def _claude_turn(notes: Path) -> list[fakellm.Reply]:
    return [
        fakellm.tool_call(
            "mcp__acp__Bash",
            {"command": "echo marker-$((6 * 7))", "description": "Run it", "timeout": 120000},
        ),
        fakellm.tool_call("mcp__acp__Read", {"file_path": str(notes)}),
        fakellm.tool_call(
            "mcp__acp__Edit", {"file_path": str(notes), "old_string": "alpha", "new_string": "beta"}
        ),
        fakellm.reply("Printed and edited."),
    ]


def _codex_turn(notes: Path) -> list[fakellm.Reply]:
    # Codex edits through `apply_patch`, which it also takes as a command of its shell tool
    # (the model's usual way): reported as an edit with its diff, not as a command.
    patch = "*** Begin Patch\n*** Update File: notes.txt\n@@\n-alpha\n+beta\n*** End Patch\n"
    return [
        fakellm.tool_call("exec_command", {"cmd": "echo marker-$((6 * 7))"}),
        fakellm.tool_call("exec_command", {"cmd": f"apply_patch <<'EOF'\n{patch}EOF\n"}),
        fakellm.reply("Printed and edited."),
    ]


def _gemini_turn(notes: Path) -> list[fakellm.Reply]:
    # Gemini CLI refuses a command with a substitution (`$((...))`): printf makes the marker.
    return [
        fakellm.tool_call("run_shell_command", {"command": "printf 'marker-%d\\n' 42"}),
        fakellm.tool_call(
            "replace",
            {
                "file_path": str(notes),
                "instruction": "Change alpha to beta",
                "old_string": "alpha",
                "new_string": "beta",
            },
        ),
        fakellm.reply("Printed and edited."),
    ]


AGENTS: dict[
    str, tuple[Callable[[str, Path], agents.AgentDefinition], Callable[[Path], list[fakellm.Reply]]]
] = {
    "opencode": (agents.opencode_definition, _opencode_turn),
    "claude-code": (agents.claude_code_definition, _claude_turn),
    "codex": (agents.codex_definition, _codex_turn),
    "gemini": (agents.gemini_definition, _gemini_turn),
}


def _configure(name: str, definition: agents.AgentDefinition) -> None:
    # The helpers' definitions are config.json entries as they are.
    update_config(lambda config: config.__setitem__("externalAgents", {name: definition}))


@pytest.mark.repo(files={"notes.txt": NOTES})
@pytest.mark.parametrize("name", sorted(AGENTS))
def test_a_real_agent_runs_a_turn_in_a_xum_workspace(name: str, repo: Path, tmp_path: Path) -> None:
    make_definition, turn = AGENTS[name]
    model = agents.AgentModel()
    notes = repo / "notes.txt"
    with fakellm.FakeLLM(responder=model) as llm:
        definition = make_definition(llm.base_url(), tmp_path / "agent")
        # Whatever the agent asks of a host other than loopback reaches the fake as an error.
        definition["env"].update(
            HTTPS_PROXY=llm.url, HTTP_PROXY=llm.url, NO_PROXY="127.0.0.1,localhost"
        )
        _configure(name, definition)
        model.script(*turn(notes))
        code, events, err = run_xum(
            repo,
            "--runtime",
            "local",
            "--permissions",
            "auto",
            "--external-agent",
            name,
            "Print the marker, then change alpha to beta in notes.txt.",
            timeout=RUN_TIMEOUT_S,
        )
        assert code == 0, (err, events[-2:])
        assert model.replies_left == 0
        # The command ran for real: its output went back to the model.
        assert "marker-42" in model.turn_requests[-1].body.decode("utf-8", "replace")
        assert notes.read_text() == "beta\n"
        types = [e["type"] for e in events]
        assert types[:2] == ["turn-start", "user-message"], types
        # The command's output reaches the user too (Codex reports it only in `rawOutput`);
        # Gemini CLI's shell reports none through ACP, and the result says so.
        outputs = [e["output"] for e in events if e["type"] == "tool-result"]
        shown = NO_OUTPUT if name == "gemini" else "marker-42"
        assert any(shown in output for output in outputs), outputs
        assert any("+beta" in output for output in outputs), outputs  # the edit, as a diff
        assert "Printed and edited." in "".join(texts(events))
        end = next(e for e in events if e["type"] == "turn-end")
        assert end["reason"] == "completed"
        workspace = final(events)["workspace_id"]
        # The log replays exactly what streamed live.
        assert replay(repo, workspace) == committed(events)

        # The same workspace goes on with the same agent.
        model.script(fakellm.reply("Still here."))
        code, again, err = run_xum(repo, "--workspace", workspace, "Anyone?", timeout=RUN_TIMEOUT_S)
        assert code == 0, (err, again[-3:])
        assert "Still here." in "".join(texts(again))
        if name == "gemini":  # its session/load does not find the session: xum starts anew
            advisories = [e["kind"] for e in again if e["type"] == "advisory"]
            assert "external-agent-new-session" in advisories, again
        assert not llm.errors, llm.errors
