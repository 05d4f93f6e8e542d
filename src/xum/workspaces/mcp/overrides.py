"""Writing a workspace's MCP overrides (`.xum/mcp.local.jsonc`), kept out of git.

The file holds one workspace's preferences (servers turned off, tool allowlists), so when xum
writes it, it also lists it in the checkout's `.git/info/exclude` (the repository's own local
ignore file, shared by its worktrees and never committed): `git status` does not show it and a
commit does not pick it up by accident.
"""

from __future__ import annotations

from pathlib import Path

from xum.core.fsutil import atomic_write_bytes
from xum.runtime import git
from xum.workspaces.mcp.paths import LOCAL_FILE, local_path


def exclude_from_git(workspace_path: str) -> Path | None:
    """Add the overrides file to the checkout's `.git/info/exclude` (once); the exclude file's
    path, or None when the workspace is not in a git repository."""
    done = git.run_git(
        ["rev-parse", "--path-format=absolute", "--git-path", "info/exclude", "--show-prefix"],
        workspace_path,
        check=False,
    )
    if done.returncode != 0:
        return None
    lines = done.stdout.splitlines()
    exclude = Path(lines[0])
    prefix = lines[1] if len(lines) > 1 else ""
    pattern = f"/{prefix}{LOCAL_FILE}"
    try:
        text = exclude.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    if pattern in text.splitlines():
        return exclude
    exclude.parent.mkdir(parents=True, exist_ok=True)
    joiner = "" if not text or text.endswith("\n") else "\n"
    note = "# xum: one workspace's MCP settings (never committed)\n"
    atomic_write_bytes(exclude, f"{text}{joiner}{note}{pattern}\n".encode(), mode=None)
    return exclude


def write_overrides(workspace_path: str, text: str) -> Path:
    """Replace the overrides file with `text` and keep it out of git."""
    path = local_path(workspace_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, text.encode("utf-8"), mode=None)
    exclude_from_git(workspace_path)
    return path
