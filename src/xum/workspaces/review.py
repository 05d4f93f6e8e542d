"""A workspace's changes against its base, for the review views of every front-end.

The server's review routes and the terminal UI's review screen both ask here: git runs through
the workspace's runtime (locally, or on the SSH host), and the base is the merge-base with the
parent workspace's branch (a fork) or the project's default branch (see `gitinfo`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from xum.runtime.base import Runtime
from xum.store import registry
from xum.store.registry import WorkspaceRecord
from xum.workspaces import gitinfo


@asynccontextmanager
async def workspace_runtime(record: WorkspaceRecord) -> AsyncIterator[Runtime]:
    """The workspace's runtime for the block (git runs where the checkout is)."""
    from xum.workspaces.service import open_runtime

    runtime = open_runtime(record)
    try:
        yield runtime
    finally:
        await runtime.close()


def parent_branch(record: WorkspaceRecord) -> str | None:
    """The branch of the workspace it was forked from, if that one still exists."""
    if record.parent_id is None:
        return None
    parent = registry.get_workspace(record.parent_id)
    return parent.branch if parent is not None else None


@dataclass
class Review:
    """Everything a review view shows at once."""

    is_git: bool
    branch: str | None = None
    base: gitinfo.Base | None = None
    ahead: int = 0
    behind: int = 0
    entries: list[gitinfo.StatusEntry] = field(default_factory=list)
    files: list[gitinfo.FileStat] = field(default_factory=list)
    diff: str = ""
    truncated: bool = False


async def review(record: WorkspaceRecord) -> Review:
    """Status, base, ahead/behind and the bounded diff of the workspace. SshError when the
    host cannot be reached."""
    async with workspace_runtime(record) as runtime:
        status = await gitinfo.status(runtime)
        if not status.is_git:
            return Review(is_git=False)
        base = await gitinfo.find_base(runtime, parent_branch(record))
        out = Review(True, status.branch, base, entries=status.entries, truncated=status.truncated)
        if base is None:  # no commit yet: nothing to compare against
            return out
        out.ahead, out.behind = await gitinfo.ahead_behind(runtime, base)
        diff = await gitinfo.diff(runtime, base)
        out.files, out.diff = diff.files, diff.diff
        out.truncated = out.truncated or diff.truncated
        return out
