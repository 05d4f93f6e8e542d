"""Helpers for context tests: real git repositories, real files, a real WorkspaceContext."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from xum.context.plan import plan_file_path
from xum.context.workspace import AgentSelection, LiveContext, WorkspaceContext, WorkspaceFacts
from xum.core.paths import xum_root
from xum.runtime.local import LocalRuntime

GIT = ["git", "-c", "user.name=Test", "-c", "user.email=test@example.com"]


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=path, check=True)
    (path / "app.py").write_text("def greet():\n    return 'hi'\n")
    subprocess.run([*GIT, "add", "."], cwd=path, check=True)
    subprocess.run([*GIT, "commit", "-qm", "init"], cwd=path, check=True)
    return path


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
