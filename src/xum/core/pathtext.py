"""Questions about paths answered on their text alone, with no file system access.

Callers resolve symlinks first (locally, or on an SSH host through the runtime); these
functions then compare the canonical strings, which works the same for a remote path."""

from __future__ import annotations


def is_within(path: str, root: str) -> bool:
    """`path` is `root` itself or lies below it (`/a/bc` is not within `/a/b`)."""
    return path == root or path.startswith(root.rstrip("/") + "/")


def checkout_root(workspace_path: str, project_path: str) -> str:
    """Where a workspace's repository files (`.xum/`, AGENTS.md upward searches) stop: the
    project when the workspace lies inside it (a subdirectory of the project), else the
    workspace itself (a worktree elsewhere, a remote checkout)."""
    return project_path if is_within(workspace_path, project_path) else workspace_path
