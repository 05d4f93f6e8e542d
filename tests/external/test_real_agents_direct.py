"""Real third-party agents (opencode, Claude Code through claude-code-acp) driven over ACP by a
minimal client (the SDK's connection with acpeditor's TestEditor), each pointed at the fake LLM
on loopback: initialize, session/new in a git repository, a turn whose model reply calls the
agent's shell tool (its output reaches the model's next request), a turn whose edit changes the
file on disk and is reported as a diff, and a session/cancel while a command runs.

This is the baseline that xum's own ACP client is measured and checked against. The agents are
installed by `make external-agents` (tools/external-agents); without them these tests skip,
unless CI is set (`make test` installs them).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from acp.schema import PermissionOption, ToolCallUpdate

from xum.testing import external_agents as agents
from xum.testing import fakellm
from xum.testing.acpeditor import Received, TestEditor

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]

# Every wait is bounded; a real agent on a loaded 2-core machine takes a few seconds a turn.
STEP = 45.0
NOTES = "alpha\n"


@dataclass(frozen=True)
class Spec:
    """How one agent is pointed at the fake and how its model calls its own tools."""

    definition: Callable[[str, Path], agents.AgentDefinition]
    shell: Callable[[str], fakellm.Reply]
    edit: Callable[[Path, str, str], list[fakellm.Reply]]


def _opencode_edit(path: Path, old: str, new: str) -> list[fakellm.Reply]:
    # opencode refuses to edit a file the session has not read.
    return [
        fakellm.tool_call("read", {"filePath": str(path)}),
        fakellm.tool_call("edit", {"filePath": str(path), "oldString": old, "newString": new}),
    ]


def _claude_edit(path: Path, old: str, new: str) -> list[fakellm.Reply]:
    # Claude Code refuses to edit a file the session has not read.
    return [
        fakellm.tool_call("mcp__acp__Read", {"file_path": str(path)}),
        fakellm.tool_call(
            "mcp__acp__Edit", {"file_path": str(path), "old_string": old, "new_string": new}
        ),
    ]


SPECS = {
    "opencode": Spec(
        definition=agents.opencode_definition,
        shell=lambda cmd: fakellm.tool_call(
            "bash", {"command": cmd, "description": "Run the command"}
        ),
        edit=_opencode_edit,
    ),
    "claude-code": Spec(
        definition=agents.claude_code_definition,
        shell=lambda cmd: fakellm.tool_call(
            # claude-code-acp 0.16.2 rejects a call without `timeout`, though its schema says
            # optional.
            "mcp__acp__Bash",
            {"command": cmd, "description": "Run the command", "timeout": 120000},
        ),
        edit=_claude_edit,
    ),
}


def allow_once(options: list[PermissionOption], call: ToolCallUpdate) -> str | None:
    for option in options:
        if option.kind == "allow_once":
            return option.option_id
    return options[0].option_id if options else None


def request_text(request: fakellm.RecordedRequest) -> str:
    return request.body.decode("utf-8", "replace")


def has_diff(item: Received, path: Path) -> bool:
    update: Any = item.update
    if item.kind not in ("tool_call", "tool_call_update"):
        return False
    return any(
        getattr(c, "type", None) == "diff" and Path(c.path) == path for c in update.content or []
    )


def runs(item: Received, needle: str) -> bool:
    """A tool-call update for the command `needle`, reported as started or running."""
    update: Any = item.update
    if item.kind not in ("tool_call", "tool_call_update"):
        return False
    return needle in f"{update.title} {update.raw_input}" and update.status in (
        None,
        "pending",
        "in_progress",
    )


def trap_outside_requests(definition: agents.AgentDefinition, llm: fakellm.FakeLLM) -> None:
    """Send whatever the agent asks of a host other than loopback, if its HTTP client honours
    the proxy variables (axios and Bun do), to the fake, which records it as an error."""
    definition["env"].update(
        HTTPS_PROXY=llm.url, HTTP_PROXY=llm.url, NO_PROXY="127.0.0.1,localhost"
    )


@contextlib.contextmanager
def fake_llm(model: agents.AgentModel) -> Any:
    with fakellm.FakeLLM(responder=model) as llm:
        yield llm
        assert not llm.errors, llm.errors  # every request was one the fake expected


@pytest.mark.repo(files={"notes.txt": NOTES})
@pytest.mark.parametrize("name", sorted(SPECS))
async def test_a_real_agent_runs_a_command_edits_a_file_and_cancels(
    name: str, repo: Path, tmp_path: Path
) -> None:
    spec = SPECS[name]
    model = agents.AgentModel()
    editor = agents.AgentClient(permission=allow_once)
    stderr = tmp_path / f"{name}.stderr"
    with fake_llm(model) as llm:
        definition = spec.definition(llm.base_url(), tmp_path / "agent")
        trap_outside_requests(definition, llm)
        try:
            async with agents.spawn(definition, editor, repo, stderr=stderr) as (conn, _, init):
                assert init.protocol_version == 1
                session = await asyncio.wait_for(
                    conn.new_session(cwd=str(repo), mcp_servers=[]), STEP
                )
                sid = session.session_id

                # 1. The shell tool: the command's output reaches the model's next request.
                model.script(spec.shell("echo marker-$((6 * 7))"), fakellm.reply("It printed."))
                done = await asyncio.wait_for(
                    conn.prompt(session_id=sid, prompt=[text_block("Run the marker.")]), STEP
                )
                assert done.stop_reason == "end_turn"
                assert model.replies_left == 0
                assert "marker-42" in request_text(model.turn_requests[-1])
                assert "It printed." in editor.message_text()

                # 2. An edit: the file changes on disk and the agent reports it as a diff.
                mark = len(editor.received)
                notes = repo / "notes.txt"
                model.script(*spec.edit(notes, "alpha", "beta"), fakellm.reply("Edited."))
                done = await asyncio.wait_for(
                    conn.prompt(session_id=sid, prompt=[text_block("Edit the notes.")]), STEP
                )
                assert done.stop_reason == "end_turn"
                assert notes.read_text() == "beta\n"
                diff = subprocess.run(
                    ["git", "diff"], cwd=repo, capture_output=True, text=True, check=True
                ).stdout
                assert "-alpha" in diff and "+beta" in diff
                await editor.wait_for(lambda r: has_diff(r, notes), STEP, after=mark)

                # 3. session/cancel while a command runs: the turn ends as cancelled.
                mark = len(editor.received)
                model.script(spec.shell("sleep 300"), fakellm.reply("Not reached."))
                turn = asyncio.create_task(
                    conn.prompt(session_id=sid, prompt=[text_block("Wait a while.")])
                )
                await editor.wait_for(lambda r: runs(r, "sleep 300"), STEP, after=mark)
                await conn.cancel(session_id=sid)
                done = await asyncio.wait_for(turn, STEP)
                assert done.stop_reason == "cancelled"
        finally:
            _stop_terminals(editor)
    # Every model request went to the fake on loopback: none of them needed anything else.
    assert all(r.path.startswith("/v1/") for r in llm.requests)
    # Nor did the agent fetch packages (opencode installs its plugin package from the npm
    # registry at start unless its config directory says it is there): npm's download cache
    # stays absent. (Claude Code runs `npm root --global`, which only writes a log.)
    assert not (tmp_path / "agent" / "home" / ".npm" / "_cacache").exists()


def _stop_terminals(editor: TestEditor) -> None:
    """The commands the agent ran through the client's terminals (Claude Code does): a
    cancelled turn may leave one running."""
    for terminal in editor.terminals.values():
        if terminal.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(terminal.process.pid, signal.SIGKILL)


async def test_two_opencode_agents_run_at_once(tmp_path: Path) -> None:
    """opencode serves its own API on 127.0.0.1:4096 when that port is free and on a free port
    otherwise: two workspaces' agents (and the user's own opencode) do not collide."""
    model = agents.AgentModel(side=fakellm.reply("Title"))
    model.script(fakellm.reply("first"), fakellm.reply("second"))

    async def turn(n: int, llm: fakellm.FakeLLM) -> str:
        checkout = tmp_path / f"checkout{n}"
        checkout.mkdir()
        subprocess.run(["git", "init", "-q", str(checkout)], check=True)
        definition = agents.opencode_definition(llm.base_url(), tmp_path / f"agent{n}")
        trap_outside_requests(definition, llm)
        client = agents.AgentClient(permission=allow_once)
        stderr = tmp_path / f"opencode{n}.stderr"
        async with agents.spawn(definition, client, checkout, stderr=stderr) as (conn, _, _):
            session = await asyncio.wait_for(
                conn.new_session(cwd=str(checkout), mcp_servers=[]), STEP
            )
            done = await asyncio.wait_for(
                conn.prompt(session_id=session.session_id, prompt=[text_block("Hi.")]), STEP
            )
            assert done.stop_reason == "end_turn"
            return client.message_text()

    with fake_llm(model) as llm:
        texts = await asyncio.gather(turn(1, llm), turn(2, llm))
    assert sorted(texts) == ["first", "second"]
