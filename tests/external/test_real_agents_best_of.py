"""Best of N across vendors with real agents: `xum run` (xum's engine on the fake LLM) calls
`task` with `agents: ["opencode", "claude-code"]`; each real agent runs the same prompt in a
worktree of its own (each pointed at a fake LLM of its own), edits and commits there; both
results come back to the parent, which applies one candidate's patch with the existing patch
flow. The agents are installed by `make external-agents` (skipped without them unless CI is
set)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from xum.store.config import update_config
from xum.testing import external_agents as agents
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM, RecordedRequest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

CHILD_PROMPT = "CHILD: change alpha in notes.txt and commit"
COMMIT = "git add notes.txt && git commit -qm candidate"


def _opencode_turn(notes: Path) -> list[fakellm.Reply]:
    return [
        fakellm.tool_call("read", {"filePath": str(notes)}),
        fakellm.tool_call(
            "edit", {"filePath": str(notes), "oldString": "alpha", "newString": "opencode"}
        ),
        fakellm.tool_call("bash", {"command": COMMIT, "description": "Commit"}),
        fakellm.reply("opencode committed."),
    ]


def _claude_turn(notes: Path) -> list[fakellm.Reply]:
    return [
        fakellm.tool_call("mcp__acp__Read", {"file_path": str(notes)}),
        fakellm.tool_call(
            "mcp__acp__Edit",
            {"file_path": str(notes), "old_string": "alpha", "new_string": "claude"},
        ),
        fakellm.tool_call(
            "mcp__acp__Bash", {"command": COMMIT, "description": "Commit", "timeout": 120000}
        ),
        fakellm.reply("Claude Code committed."),
    ]


def _results(request: RecordedRequest) -> str:
    out = []
    for message in request.json.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            for block in content:
                if block.get("type") == "tool_result":
                    inner = block.get("content")
                    out.append(inner if isinstance(inner, str) else json.dumps(inner))
    return "\n".join(out)


class InWorktree:
    """An agent's model: its turn takes `turn(notes)`, with notes.txt of the worktree the
    agent works in, read from the working directory its own prompt names (a candidate's
    worktree is made when the task starts, so the script cannot know it before)."""

    def __init__(self, turn: Callable[[Path], list[fakellm.Reply]]) -> None:
        self.model = agents.AgentModel()
        self.turn = turn
        self.cwd: Path | None = None

    def __call__(self, request: RecordedRequest) -> fakellm.Reply | None:
        if self.cwd is None and agents.is_turn_request(request):
            found = re.search(r"[Ww]orking directory: (/[^\s\\\"<]+)", request.body.decode())
            if found:
                self.cwd = Path(found.group(1))
                self.model.script(*self.turn(self.cwd / "notes.txt"))
        return self.model(request)


@pytest.mark.repo(files={"notes.txt": "alpha\n"}, identity=True)
def test_best_of_two_vendors_runs_each_in_its_worktree_and_applies_one(
    repo: Path, tmp_path: Path
) -> None:
    opencode = InWorktree(_opencode_turn)
    claude = InWorktree(_claude_turn)

    def parent(request: RecordedRequest) -> fakellm.Reply:
        step = sum(1 for m in request.json["messages"] if m["role"] == "assistant")
        if step == 0:
            return fakellm.tool_call(
                "task",
                {
                    "title": "Notes",
                    "prompt": CHILD_PROMPT,
                    "agents": ["opencode", "claude-code"],
                },
            )
        if step == 1:
            found = re.search(r'<task id="([0-9a-f]{10})"[^>]*opencode', _results(request))
            return fakellm.tool_call(
                "task_apply_git_patch", {"task_id": found.group(1) if found else "missing"}
            )
        return fakellm.text("Compared and applied.")

    with (
        FakeLLM(responder=parent) as xum_llm,
        FakeLLM(responder=opencode) as opencode_llm,
        FakeLLM(responder=claude) as claude_llm,
    ):
        entries = {}
        for name, definition in (
            ("opencode", agents.opencode_definition(opencode_llm.base_url(), tmp_path / "oc")),
            ("claude-code", agents.claude_code_definition(claude_llm.base_url(), tmp_path / "cc")),
        ):
            entries[name] = definition  # the helpers' definitions are config.json entries
        update_config(lambda config: config.__setitem__("externalAgents", entries))
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "xum",
                "run",
                "--json",
                "--runtime",
                "local",
                "-m",
                "anthropic:claude-sonnet-5-5",
                "PARENT: best of two",
            ],
            cwd=repo,
            env={**os.environ, "ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": xum_llm.url},
            capture_output=True,
            text=True,
            timeout=200,
            check=False,
        )
        assert done.returncode == 0, done.stderr + done.stdout[-3000:]
        final = json.loads(done.stdout.splitlines()[-1])
        assert final["text"] == "Compared and applied.", final
        # Both candidates ran their scripted turns, each against its own model server.
        assert opencode.cwd is not None and claude.cwd is not None
        assert opencode.cwd != claude.cwd != repo  # each in a worktree of its own
        assert opencode.model.replies_left == 0 and claude.model.replies_left == 0
        results = _results(xum_llm.requests[-1])
        assert "opencode committed." in results and "Claude Code committed." in results
        assert not xum_llm.errors and not opencode_llm.errors and not claude_llm.errors
    # The opencode candidate's commit is applied to the parent's checkout.
    assert (repo / "notes.txt").read_text() == "opencode\n"
