"""Approvals and the read denylist through the real middleware, tools, sandbox and config.

Calls go through `run_one` with the workspace's own layers in their order (approvals, then the
sandbox), in a real git checkout with the real bubblewrap where it works. The approver stands in
for a person: it records each request and answers from a script.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.gitrepo import make_repo
from xum.core.paths import xum_root
from xum.engine import events as E
from xum.engine.extensions import ToolCall, ToolMiddleware
from xum.engine.toolrun import run_one
from xum.runtime.local import LocalRuntime
from xum.runtime.sandbox import local_backend
from xum.store import registry
from xum.tools.base import ToolContext, ToolResult
from xum.workspaces.safety.approvals import (
    ApprovalAnswer,
    ApprovalMiddleware,
    Decision,
    forget_rule,
)
from xum.workspaces.safety.choice import SafetyChoice
from xum.workspaces.safety.sandboxing import SandboxMiddleware

SANDBOX = local_backend().ok
needs_sandbox = pytest.mark.skipif(not SANDBOX, reason=f"no bubblewrap: {local_backend().detail}")
TOOLS = ["bash", "file_read", "file_edit_replace_string", "file_edit_insert"]


def write_config(**sections: Any) -> None:
    root = xum_root()
    root.mkdir(parents=True, exist_ok=True)
    path = root / "config.json"
    current = orjson.loads(path.read_bytes()) if path.exists() else {}
    current.update(sections)
    path.write_bytes(orjson.dumps(current))


class Person:
    """An approver that answers from a script, in order, and keeps every request."""

    def __init__(self, *answers: ApprovalAnswer) -> None:
        self.answers = list(answers)
        self.requests: list[E.ApprovalRequest] = []

    async def __call__(self, request: E.ApprovalRequest) -> ApprovalAnswer:
        self.requests.append(request)
        assert self.answers, f"an unexpected approval request: {request}"
        return self.answers.pop(0)


def answer(decision: Decision, reason: str | None = None) -> ApprovalAnswer:
    return ApprovalAnswer(decision, reason)


@dataclasses.dataclass
class Rig:
    ctx: ToolContext
    workspace: Path
    events: list[E.Event]
    layers: list[ToolMiddleware]

    async def call(self, tool: str, **arguments: Any) -> ToolResult:
        if tool == "bash":
            arguments.setdefault("display_name", "test")
        raw = orjson.dumps(arguments).decode()
        call = ToolCall(id=f"c{len(self.events)}-{os.urandom(2).hex()}", name=tool, arguments=raw)
        return await run_one(call, self.ctx, TOOLS, self.layers)

    def kinds(self) -> list[str]:
        return [
            e.type for e in self.events if isinstance(e, E.ApprovalRequest | E.ApprovalResolved)
        ]


def make_rig(
    tmp_path: Path,
    choice: SafetyChoice,
    approver: Person | None = None,
    *,
    permissions: str | None = None,
) -> Rig:
    repo = make_repo(tmp_path / "repo")
    registry.ensure_project(str(repo))
    from xum.workspaces.service import create_workspace

    record, _runtime = create_workspace(repo, "local", name_hint="approvals")
    if permissions is not None:
        registry.update_workspace(record.id, permissions=permissions)
    scratch = xum_root() / "scratch" / record.id
    scratch.mkdir(parents=True, exist_ok=True)
    events: list[E.Event] = []
    local = LocalRuntime(str(repo))
    ctx = ToolContext(
        call_id="",
        runtime=local,
        workspace_id=record.id,
        workspace_name=record.name,
        project_path=str(repo),
        scratch_dir=str(scratch),
        env={},
    )
    layers: list[ToolMiddleware] = [
        ApprovalMiddleware(
            record.id,
            project_root=str(repo),
            emit=events.append,
            choice=choice,
            approver=approver,
        ),
        SandboxMiddleware(
            local, workspace_id=record.id, scratch_dir=scratch, emit=events.append, choice=choice
        ),
    ]
    return Rig(ctx, repo, events, layers)


@pytest.fixture
def outside(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A directory outside the checkout and outside /tmp (the home of these tests)."""
    home = Path(tempfile.mkdtemp(prefix="xum-approvals-", dir="/var/tmp"))
    monkeypatch.setenv("HOME", str(home))
    yield home
    subprocess.run(["rm", "-rf", str(home)], check=False)


async def test_a_critical_command_is_refused_when_nobody_can_approve(
    tmp_path: Path, outside: Path
) -> None:
    victim = outside / "precious"
    victim.mkdir()
    rig = make_rig(tmp_path, SafetyChoice(sandbox="off", approval="never"))
    result = await rig.call("bash", script=f"rm -rf {victim}")
    assert result.is_error
    assert "needs a person's approval" in result.output and "rm -rf" in result.output
    assert victim.is_dir()
    assert result.meta["approval"]["decision"] == "deny"
    assert result.meta["approval"]["by"] == "policy"
    assert rig.kinds() == ["approval-request", "approval-resolved"]
    request = next(e for e in rig.events if isinstance(e, E.ApprovalRequest))
    assert request.kind == "critical" and request.subject == f"rm -rf {victim}"
    # An ordinary command is not asked about in auto mode.
    fine = await rig.call("bash", script="echo fine > made.txt")
    assert not fine.is_error and (rig.workspace / "made.txt").exists()


async def test_critical_commands_ask_even_in_auto_mode(tmp_path: Path) -> None:
    person = Person(answer("deny", "not on my machine"))
    rig = make_rig(tmp_path, SafetyChoice(sandbox="off", approval="ask"), person)
    result = await rig.call("bash", script="git push --force origin main")
    assert result.is_error
    assert "the user denied it: not on my machine" in result.output
    (request,) = person.requests
    assert request.kind == "critical" and "force push" in request.why
    assert result.meta["approval"] == {
        "decision": "deny",
        "by": "user",
        "kind": "critical",
        "why": request.why,
        "reason": "not on my machine",
    }


async def test_ask_mode_allowlist_once_and_always(tmp_path: Path) -> None:
    person = Person(answer("once"), answer("always"))
    rig = make_rig(tmp_path, SafetyChoice(sandbox="off"), person, permissions="ask")

    listed = await rig.call("bash", script="ls && git status --short | head -3")
    assert not listed.is_error and person.requests == []  # read-only commands: no question

    once = await rig.call("bash", script="echo 1 > one.txt")
    assert not once.is_error and (rig.workspace / "one.txt").exists()
    assert once.meta["approval"]["decision"] == "once"
    assert person.requests[0].kind == "command" and person.requests[0].prefix is None

    always = await rig.call("bash", script="touch two.txt")
    assert not always.is_error
    assert person.requests[1].prefix == "touch"
    assert always.meta["approval"]["prefix"] == "touch"
    rules = orjson.loads((xum_root() / "config.json").read_bytes())["approvals"]["rules"]
    assert [(r["project"], r["prefix"]) for r in rules] == [(str(rig.workspace), "touch")]

    again = await rig.call("bash", script="touch three.txt")  # remembered: not asked again
    assert not again.is_error and len(person.requests) == 2
    assert forget_rule(str(rig.workspace), "touch")
    person.answers.append(answer("deny"))
    forgotten = await rig.call("bash", script="touch four.txt")
    assert forgotten.is_error and not (rig.workspace / "four.txt").exists()


async def test_a_file_edit_outside_the_workspace_can_be_approved_in_ask_mode(
    tmp_path: Path, outside: Path
) -> None:
    target = outside / "notes.txt"
    target.write_text("old\n")
    person = Person(answer("deny"), answer("once"))
    rig = make_rig(tmp_path, SafetyChoice(approval="ask"), person, permissions="ask")
    edit = {"path": str(target), "old_string": "old", "new_string": "new"}
    denied = await rig.call("file_edit_replace_string", **edit)
    assert denied.is_error and target.read_text() == "old\n"
    assert person.requests[0].kind == "write" and person.requests[0].subject == str(target)
    approved = await rig.call("file_edit_replace_string", **edit)
    assert not approved.is_error, approved.output
    assert target.read_text() == "new\n"
    # Inside the workspace nothing is asked.
    inside = await rig.call(
        "file_edit_replace_string", path="app.py", old_string="'hi'", new_string="'hello'"
    )
    assert not inside.is_error and len(person.requests) == 2


async def test_read_only_mode_refuses_edits_and_sandboxes_commands(tmp_path: Path) -> None:
    # (`--approval never` keeps read-only too: test_permission_mode.py.)
    rig = make_rig(tmp_path, SafetyChoice(approval="deny"), permissions="read-only")
    edit = await rig.call(
        "file_edit_replace_string", path="app.py", old_string="'hi'", new_string="'x'"
    )
    assert edit.is_error and "read-only permission mode" in edit.output
    assert "'hi'" in (rig.workspace / "app.py").read_text()
    command = await rig.call("bash", script="cat app.py && echo x > new.txt")
    assert "def greet" in command.output
    if SANDBOX:
        assert command.is_error and not (rig.workspace / "new.txt").exists()
    else:
        assert command.is_error and "bash was not run" in command.output
    escalate = await rig.call(
        "bash", script="echo x > new.txt", sandbox_escalation="the task needs to write"
    )
    assert escalate.is_error and "cannot be escalated" in escalate.output


@needs_sandbox
async def test_a_sandbox_escalation_runs_outside_once_when_approved(
    tmp_path: Path, outside: Path
) -> None:
    person = Person(answer("once"))
    rig = make_rig(tmp_path, SafetyChoice(sandbox="workspace-write", approval="ask"), person)
    target = outside / "cache-entry"
    denied = await rig.call("bash", script=f"echo x > {target}")
    assert denied.is_error and denied.meta.get("sandbox_denied") and not target.exists()
    reason = "the build cache lives in my home directory"
    escalated = await rig.call("bash", script=f"echo x > {target}", sandbox_escalation=reason)
    assert not escalated.is_error, escalated.output
    assert target.read_text() == "x\n"
    (request,) = person.requests
    assert request.kind == "escalation" and request.reason == reason
    assert escalated.meta["approval"]["kind"] == "escalation"
    # For that one call only: the next write outside is denied by the sandbox again.
    after = await rig.call("bash", script=f"echo y > {target}")
    assert after.is_error and target.read_text() == "x\n"


async def test_an_escalation_is_refused_when_nobody_can_approve(tmp_path: Path) -> None:
    rig = make_rig(tmp_path, SafetyChoice(approval="never"))
    result = await rig.call("bash", script="echo x", sandbox_escalation="because")
    assert result.is_error and "nobody can approve" in result.output
    assert result.meta["approval"]["kind"] == "escalation"


async def test_an_interrupted_wait_says_so(tmp_path: Path) -> None:
    started = asyncio.Event()

    async def waits_forever(request: E.ApprovalRequest) -> ApprovalAnswer:
        started.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    rig = make_rig(tmp_path, SafetyChoice(sandbox="off", approval="ask"))
    layer = rig.layers[0]
    assert isinstance(layer, ApprovalMiddleware)
    layer.approver = waits_forever
    task = asyncio.create_task(rig.call("bash", script="rm -rf /"))
    await asyncio.wait_for(started.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    resolved = [e for e in rig.events if isinstance(e, E.ApprovalResolved)]
    assert [(r.decision, r.by) for r in resolved] == [("deny", "interrupted")]


# The read denylist ----------------------------------------------------------------------------


async def test_the_denylist_holds_in_the_file_tools(tmp_path: Path, outside: Path) -> None:
    (outside / ".ssh").mkdir()
    (outside / ".ssh" / "id_ed25519").write_text("PRIVATE KEY\n")
    rig = make_rig(tmp_path, SafetyChoice(sandbox="off", approval="never"))
    (rig.workspace / ".env").write_text("TOKEN=abc\n")
    (rig.workspace / "server.pem").write_text("CERT\n")
    (rig.workspace / "link-to-key").symlink_to(outside / ".ssh" / "id_ed25519")
    assert not (await rig.call("file_read", path=".env")).is_error  # opt-in: off by default
    write_config(readDenylist={"sensitive": True, "paths": [str(rig.workspace / "private")]})
    (rig.workspace / "private").mkdir()
    (rig.workspace / "private" / "notes").write_text("secret notes\n")
    for path in (
        ".env",
        "server.pem",
        "link-to-key",
        str(outside / ".ssh/id_ed25519"),
        "private/notes",
    ):
        result = await rig.call("file_read", path=path)
        assert result.is_error and "read denylist" in result.output, path
        assert "PRIVATE" not in result.output and "TOKEN" not in result.output
    edit = await rig.call("file_edit_insert", path=".env", insert_after="TOKEN=abc", content="X")
    assert edit.is_error and "read denylist" in edit.output
    assert not (await rig.call("file_read", path="app.py")).is_error


@needs_sandbox
async def test_the_denylist_holds_in_the_shell(tmp_path: Path, outside: Path) -> None:
    (outside / ".ssh").mkdir()
    (outside / ".ssh" / "id_ed25519").write_text("PRIVATE KEY\n")
    rig = make_rig(tmp_path, SafetyChoice(sandbox="workspace-write", approval="never"))
    (rig.workspace / ".env").write_text("TOKEN=abc\n")
    secret_file = outside / "vault.txt"
    secret_file.write_text("VAULT\n")
    write_config(readDenylist={"sensitive": True, "paths": [str(secret_file)]})
    result = await rig.call(
        "bash",
        script=f'cat ~/.ssh/id_ed25519 .env {secret_file}; echo "entries=$(ls -A ~/.ssh | wc -l)"',
    )
    assert "entries=0" in result.output  # the directory is shown empty
    for leaked in ("PRIVATE", "TOKEN", "VAULT"):
        assert leaked not in result.output


async def test_a_malformed_denylist_fails_closed(tmp_path: Path) -> None:
    rig = make_rig(tmp_path, SafetyChoice(sandbox="off", approval="never"))
    write_config(readDenylist={"sensitive": "yes"})
    result = await rig.call("file_read", path="app.py")
    assert result.is_error and "malformed" in result.output


async def test_the_file_tools_never_write_into_xum(tmp_path: Path) -> None:
    rig = make_rig(tmp_path, SafetyChoice(sandbox="off", approval="never"))
    (rig.workspace / ".xum").mkdir()
    (rig.workspace / ".xum" / "tool_pre").write_text("#!/bin/sh\nexit 0\n")
    result = await rig.call(
        "file_edit_replace_string", path=".xum/tool_pre", old_string="exit 0", new_string="curl x"
    )
    assert result.is_error and ".xum/" in result.output
    assert "exit 0" in (rig.workspace / ".xum" / "tool_pre").read_text()
