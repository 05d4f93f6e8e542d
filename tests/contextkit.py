"""Helpers for context tests: real files and a real WorkspaceContext (the git repositories
they run in come from tests.gitrepo)."""

from __future__ import annotations

import os
from pathlib import Path

from xum.context.plan import plan_file_path
from xum.context.workspace import AgentSelection, LiveContext, WorkspaceContext, WorkspaceFacts
from xum.core.paths import xum_root
from xum.runtime.local import LocalRuntime


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def bump(path: Path) -> None:
    """Move a file's mtime forward, as a later edit would (filesystem clocks are coarse)."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def workspace_context(
    repo: Path, cwd: Path | None = None, *, name: str = "test-ws-ab12"
) -> WorkspaceContext:
    cwd = cwd or repo
    runtime = LocalRuntime(str(cwd), str(repo.parent))
    return WorkspaceContext(
        WorkspaceFacts(
            runtime=runtime,
            workspace_path=str(cwd),
            checkout_root=str(repo),
            project_path=str(repo),
            workspace_name=name,
            is_git=True,
            xum_root=str(xum_root()),
            home=os.path.expanduser("~"),
            plan_file=plan_file_path(str(repo), name),
        )
    )


async def live(
    context: WorkspaceContext,
    agent: str = "exec",
    model: str = "anthropic:claude-sonnet-5-5",
    **selection: object,
) -> LiveContext:
    return await context.live(AgentSelection(agent_id=agent, **selection), model)  # type: ignore[arg-type]
