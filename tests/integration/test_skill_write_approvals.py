"""The permission modes hold for the skill tools: read-only refuses a skill write or delete,
ask waits for a person on every one (a skill steers the model), auto runs it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson

from tests.contextkit import workspace_context
from tests.gitrepo import make_repo
from xum.core.paths import xum_root
from xum.engine import events as E
from xum.engine.extensions import ToolCall, ToolMiddleware
from xum.engine.toolrun import run_one
from xum.store import registry
from xum.tools.base import ToolContext, ToolResult
from xum.workspaces.safety.approvals import ApprovalAnswer, ApprovalMiddleware
from xum.workspaces.safety.choice import SafetyChoice

TOOLS = ["agent_skill_write", "agent_skill_delete", "agent_skill_read"]
SKILL = "---\nname: ship\ndescription: ship it\n---\nGo.\n"


class Person:
    """Answers approval requests from a script, keeping each request."""

    def __init__(self, *decisions: str) -> None:
        self.decisions = list(decisions)
        self.requests: list[E.ApprovalRequest] = []

    async def __call__(self, request: E.ApprovalRequest) -> ApprovalAnswer:
        self.requests.append(request)
        assert self.decisions, f"unexpected approval request: {request}"
        return ApprovalAnswer(self.decisions.pop(0))  # type: ignore[arg-type]


class Rig:
    def __init__(self, tmp_path: Path, permissions: str, person: Person | None) -> None:
        from xum.workspaces.service import create_workspace

        self.repo = make_repo(tmp_path / "repo")
        registry.ensure_project(str(self.repo))
        record, _ = create_workspace(self.repo, "local", name_hint="skills")
        registry.update_workspace(record.id, permissions=permissions)
        scratch = xum_root() / "scratch" / record.id
        scratch.mkdir(parents=True, exist_ok=True)
        context = workspace_context(self.repo)
        self.ctx = ToolContext(
            call_id="",
            runtime=context.facts.runtime,
            workspace_id=record.id,
            workspace_name=record.name,
            project_path=str(self.repo),
            scratch_dir=str(scratch),
            env={},
            skills=context.skill_access(),
        )
        self.layers: list[ToolMiddleware] = [
            ApprovalMiddleware(
                record.id,
                project_root=str(self.repo),
                emit=lambda _e: None,
                choice=SafetyChoice(),
                approver=person,
            )
        ]

    async def call(self, tool: str, **arguments: Any) -> ToolResult:
        raw = orjson.dumps(arguments).decode()
        call = ToolCall(id=f"c-{os.urandom(3).hex()}", name=tool, arguments=raw)
        return await run_one(call, self.ctx, TOOLS, self.layers)


async def test_read_only_mode_refuses_skill_changes(tmp_path: Path) -> None:
    rig = Rig(tmp_path, "read-only", None)
    write = await rig.call("agent_skill_write", name="ship", content=SKILL)
    assert write.is_error and "read-only permission mode" in write.output
    assert not (rig.repo / ".xum/skills/ship").exists()
    (rig.repo / ".xum/skills/ship").mkdir(parents=True)
    (rig.repo / ".xum/skills/ship/SKILL.md").write_text(SKILL)
    delete = await rig.call("agent_skill_delete", name="ship", target="skill", confirm=True)
    assert delete.is_error and (rig.repo / ".xum/skills/ship/SKILL.md").exists()


async def test_ask_mode_asks_for_every_skill_change(tmp_path: Path) -> None:
    person = Person("deny", "once", "once")
    rig = Rig(tmp_path, "ask", person)
    denied = await rig.call("agent_skill_write", name="ship", content=SKILL)
    assert denied.is_error and not (rig.repo / ".xum/skills/ship").exists()
    request = person.requests[0]
    assert request.kind == "write" and request.subject == ".xum/skills/ship/SKILL.md"
    assert "steers the model" in request.why
    allowed = await rig.call("agent_skill_write", name="ship", content=SKILL)
    assert not allowed.is_error and (rig.repo / ".xum/skills/ship/SKILL.md").exists()
    deleted = await rig.call("agent_skill_delete", name="ship", target="skill", confirm=True)
    assert not deleted.is_error and not (rig.repo / ".xum/skills/ship").exists()
    assert person.requests[2].subject == ".xum/skills/ship/"
    # Reading asks nothing.
    assert (await rig.call("agent_skill_read", name="xum-customize")).is_error is False
    assert len(person.requests) == 3


async def test_auto_mode_writes_without_asking(tmp_path: Path) -> None:
    rig = Rig(tmp_path, "auto", Person())
    written = await rig.call("agent_skill_write", name="ship", content=SKILL, scope="global")
    assert not written.is_error and (xum_root() / "skills/ship/SKILL.md").exists()
