"""The assembled system prompt of sibling workspaces: nothing in it names the workspace, so two
workspaces of one project share it byte for byte (and a provider cache across them)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.contextkit import live, write
from tests.gitrepo import GIT, make_repo
from xum.context.workspace import WorkspaceContext
from xum.runtime.base import Runtime
from xum.store.registry import WorkspaceRecord
from xum.workspaces.service import create_workspace


def context_of(record: WorkspaceRecord, runtime: Runtime) -> WorkspaceContext:
    return WorkspaceContext.for_workspace(
        runtime,
        workspace_path=record.path,
        project_path=record.project_path,
        workspace_name=record.name,
        is_git=True,
    )


async def test_sibling_worktrees_get_byte_identical_exec_prompts(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "proj")
    write(repo / "AGENTS.md", "Run the tests before you finish.\n")
    write(repo / ".xum/AGENTS.md", "## Mode: exec\nCommit in small steps.\n")
    write(repo / ".xum/skills/lint/SKILL.md", "---\nname: lint\ndescription: Lint it\n---\nRun.\n")
    subprocess.run([*GIT, "add", "."], cwd=repo, check=True)
    subprocess.run([*GIT, "commit", "-qm", "context"], cwd=repo, check=True)
    one, runtime_one = create_workspace(repo, "worktree", name_hint="one")
    two, runtime_two = create_workspace(repo, "worktree", name_hint="two")
    assert one.path != two.path and one.name != two.name

    first = await live(context_of(one, runtime_one), "exec")
    second = await live(context_of(two, runtime_two), "exec")
    assert first.system == second.system
    assert "Run the tests" in first.system and "Commit in small steps." in first.system
    assert "- lint: Lint it" in first.system
    assert one.name not in first.system and one.path not in first.system
    assert [t.description for t in first.tools] == [t.description for t in second.tools]
